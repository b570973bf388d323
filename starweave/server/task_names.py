"""Task-name reservations: /api/dispatch books a name for the device it sends the task to.

Results and log folders are keyed by task name, so a name may belong to one session only, and only
the device a name was dispatched to may use it when it echoes the TASK back.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field

from starweave.errors import TaskNameInUse


@dataclass
class Reservation:
    """A dispatched task name waiting for its device's TASK echo."""

    client_id: str
    created: float = field(default_factory=time.monotonic)


class TaskNameBook:
    """Reservations by task name (single event loop: no method awaits, so no lock)."""

    def __init__(self) -> None:
        self._reserved: dict[str, Reservation] = {}

    def __contains__(self, task_name: object) -> bool:
        return task_name in self._reserved

    def __len__(self) -> int:
        return len(self._reserved)

    def holder(self, task_name: str) -> str | None:
        """The client the name is reserved for, or None."""
        reservation = self._reserved.get(task_name)
        return reservation.client_id if reservation else None

    def reserve(self, task_name: str, client_id: str) -> None:
        """Book ``task_name`` for ``client_id``; raises TaskNameInUse when booked already."""
        if task_name in self._reserved:
            raise TaskNameInUse(f"Task name '{task_name}' is already in use")
        self._reserved[task_name] = Reservation(client_id)

    def release(self, task_name: str) -> None:
        """Drop the reservation (the session took the name over, or the dispatch failed)."""
        self._reserved.pop(task_name, None)

    def touch(self, task_name: str) -> None:
        """Restart the reservation's age (its TASK was just sent, after waiting in a queue)."""
        reservation = self._reserved.get(task_name)
        if reservation is not None:
            reservation.created = time.monotonic()

    def prune(self, ttl: float, now: float | None = None, keep: Collection[str] = ()) -> int:
        """Drop reservations older than ``ttl`` s (their device never echoed them); returns how many.

        Names in ``keep`` (tasks still queued for a busy device) stay.
        """
        now = time.monotonic() if now is None else now
        stale = [name for name, r in self._reserved.items() if now - r.created > ttl and name not in keep]
        for name in stale:
            del self._reserved[name]
        return len(stale)
