"""SessionLogObserver: the event stream of a session as JSON lines (``events.log``).

One line per event with every event field. Task lines also carry ``device_id`` and ``task_name``
(looked up in the latest constellation seen, since TASK_STARTED itself does not name the device),
which is what the Gantt chart of the reports needs. Constellations are written as a short summary
unless ``full_constellations`` is set (a full copy per task event grows quadratically).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from starweave.galaxy.events import Event, TaskEvent
from starweave.session.logs import JsonLinesWriter

from .serialize import event_to_dict

EVENTS_LOG = "events.log"
_CONSTELLATION_KEYS = ("constellation", "new_constellation")


class SessionLogObserver:
    """Appends every event it receives to ``path`` (a file, or a folder that gets ``events.log``)."""

    def __init__(
        self, path: str | Path, full_constellations: bool = False, secrets: Iterable[str] = ()
    ) -> None:
        target = Path(path)
        if target.is_dir():
            target = target / EVENTS_LOG
        target.parent.mkdir(parents=True, exist_ok=True)
        self.path = target
        self.full_constellations = full_constellations
        self._writer = JsonLinesWriter(target, secrets)
        self._constellation: Any = None  # latest constellation object seen in any payload

    async def on_event(self, event: Event) -> None:
        """Write one line for ``event``."""
        for key in _CONSTELLATION_KEYS:
            if event.data.get(key) is not None:
                self._constellation = event.data[key]
                break
        record = event_to_dict(event, self.full_constellations)
        if isinstance(event, TaskEvent):
            record.update(self._task_fields(event))
        self._writer.write(record)

    def _task_fields(self, event: TaskEvent) -> dict[str, Any]:
        device_id = getattr(event.result, "device_id", None)
        name = None
        task = None
        if self._constellation is not None and hasattr(self._constellation, "get_task"):
            task = self._constellation.get_task(event.task_id)
        if task is not None:
            name = task.name
            device_id = device_id or task.target_device_id
        return {"device_id": device_id, "task_name": name}
