"""ConstellationModificationSynchronizer: holds new assignments back until the agent has edited the
constellation after a task ended (spec B §6.5, E §8.4).

Every TASK_COMPLETED/TASK_FAILED registers a pending modification for that task *while the event
is being published* (the bus awaits its observers), so the orchestrator's next scheduling pass
sees it. A CONSTELLATION_MODIFIED event whose ``data["on_task_id"]`` lists the task resolves it and
its ``new_constellation`` becomes the base of the next merge. Each pending modification resolves
itself (as "timed out") after ``modification_timeout`` seconds, so nothing waits forever.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from starweave.errors import InvalidArgumentError
from starweave.galaxy.constellation import TaskConstellation
from starweave.galaxy.events import Event, EventType

from .merge import is_state_more_advanced, merge_constellation_states

if TYPE_CHECKING:
    from .orchestrator import TaskConstellationOrchestrator

log = logging.getLogger("starweave.galaxy.orchestrator.sync")

SYNC_EVENT_TYPES = frozenset(
    {
        EventType.TASK_COMPLETED,
        EventType.TASK_FAILED,
        EventType.CONSTELLATION_STARTED,
        EventType.CONSTELLATION_MODIFIED,
    }
)
"""The event types to subscribe the synchronizer to."""


class ConstellationModificationSynchronizer:
    """An event observer that gates scheduling on the agent's edits and merges its constellation."""

    def __init__(
        self,
        orchestrator: TaskConstellationOrchestrator | None = None,
        modification_timeout: float = 600.0,
    ) -> None:
        if modification_timeout <= 0:
            raise InvalidArgumentError("modification_timeout must be a positive number of seconds")
        self.orchestrator = orchestrator
        self._modification_timeout = modification_timeout
        self._pending_modifications: dict[str, asyncio.Future[bool]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._current_constellation_id: str | None = None
        self._current_constellation: TaskConstellation | None = None
        self._stats = {"total_modifications": 0, "completed_modifications": 0, "timeout_modifications": 0}

    # ----------------------------------------------------------------- events
    async def on_event(self, event: Event) -> None:
        """Register, resolve or reset pending modifications (never blocks)."""
        kind = event.event_type
        if kind in (EventType.TASK_COMPLETED, EventType.TASK_FAILED):
            self._handle_task_event(event)
        elif kind is EventType.CONSTELLATION_MODIFIED:
            self._handle_modified(event)
        elif kind is EventType.CONSTELLATION_STARTED:
            self._handle_started(event)

    def _handle_task_event(self, event: Event) -> None:
        task_id = getattr(event, "task_id", "")
        if not task_id or not event.data.get("constellation_id"):
            return
        if task_id in self._pending_modifications:
            return
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending_modifications[task_id] = future
        self._stats["total_modifications"] += 1
        self._timers[task_id] = asyncio.get_running_loop().call_later(
            self._modification_timeout, self._auto_complete_on_timeout, task_id
        )
        log.debug("Registered pending modification for task '%s'", task_id)

    def _handle_modified(self, event: Event) -> None:
        task_ids = event.data.get("on_task_id") or []
        if isinstance(task_ids, str):
            task_ids = [task_ids]
        new = event.data.get("new_constellation")
        if isinstance(new, TaskConstellation):
            self._current_constellation = new
        for task_id in task_ids:
            if self._resolve(task_id, True):
                self._stats["completed_modifications"] += 1
                log.debug("Completed modification for task '%s'", task_id)
        if self.orchestrator is not None:
            self.orchestrator.notify_constellation_changed()

    def _handle_started(self, event: Event) -> None:
        constellation = event.data.get("constellation")
        cid = getattr(event, "constellation_id", "") or getattr(constellation, "constellation_id", None)
        if cid != self._current_constellation_id:
            self._current_constellation = None  # an older run's agent copy must not be merged in
        self._current_constellation_id = cid
        if isinstance(constellation, TaskConstellation):
            self._current_constellation = constellation

    def _resolve(self, task_id: str, value: bool) -> bool:
        future = self._pending_modifications.pop(task_id, None)
        timer = self._timers.pop(task_id, None)
        if timer is not None:
            timer.cancel()
        if future is None or future.done():
            return False
        future.set_result(value)
        return True

    def _auto_complete_on_timeout(self, task_id: str) -> None:
        if self._resolve(task_id, False):
            self._stats["timeout_modifications"] += 1
            log.warning(
                "Modification for task '%s' timed out after %.1fs. Auto-completing to prevent deadlock.",
                task_id,
                self._modification_timeout,
            )

    # ----------------------------------------------------------------- waiting and merging
    async def wait_for_pending_modifications(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until no modification is pending (late registrations join the wait).

        True when all were resolved; False when ``timeout`` (seconds, overall) ran out, in which
        case every pending modification is dropped. Without ``timeout`` each pending modification
        still ends after ``modification_timeout``.
        """
        if not self._pending_modifications:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._pending_modifications:
            waiting = list(self._pending_modifications.values())
            log.debug("Waiting for %d pending modification(s): %s", len(waiting), self.get_pending_task_ids())
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return self._give_up(timeout)
            _, still = await asyncio.wait(waiting, timeout=remaining)
            if still:
                return self._give_up(timeout)
        return True

    def _give_up(self, timeout: float | None) -> bool:
        log.warning(
            "Timeout waiting for modifications after %ss. Proceeding anyway. Pending: %s",
            timeout,
            self.get_pending_task_ids(),
        )
        self.clear_pending_modifications()
        return False

    def merge_and_sync_constellation_states(
        self, orchestrator_constellation: TaskConstellation
    ) -> TaskConstellation:
        """The agent's latest constellation with the orchestrator's execution state merged in
        (the orchestrator's copy itself when the agent has not published one)."""
        agent = self._current_constellation
        if agent is None or agent is orchestrator_constellation:
            return orchestrator_constellation
        if agent.constellation_id != orchestrator_constellation.constellation_id:
            log.warning(
                "Ignoring agent constellation %s: orchestrating %s",
                agent.constellation_id,
                orchestrator_constellation.constellation_id,
            )
            return orchestrator_constellation
        merged = merge_constellation_states(agent, orchestrator_constellation)
        self._current_constellation = merged
        return merged

    _is_state_more_advanced = staticmethod(is_state_more_advanced)

    # ----------------------------------------------------------------- misc
    def set_modification_timeout(self, timeout: float) -> None:
        """Seconds after which a pending modification resolves itself (must be > 0)."""
        if timeout <= 0:
            raise InvalidArgumentError("Modification timeout must be a positive number of seconds")
        self._modification_timeout = timeout

    def has_pending_modifications(self) -> bool:
        """True while some task's edit is awaited."""
        return bool(self._pending_modifications)

    def get_pending_count(self) -> int:
        """How many edits are awaited."""
        return len(self._pending_modifications)

    def get_pending_task_ids(self) -> list[str]:
        """Ids of the tasks whose edit is awaited."""
        return list(self._pending_modifications)

    def get_current_constellation(self) -> TaskConstellation | None:
        """The agent's latest constellation (merged once the orchestrator synced)."""
        return self._current_constellation

    def get_statistics(self) -> dict[str, Any]:
        """Counters plus the current pending count."""
        return {
            **self._stats,
            "pending_modifications": len(self._pending_modifications),
            "current_constellation_id": self._current_constellation_id,
            "modification_timeout": self._modification_timeout,
        }

    def clear_pending_modifications(self) -> None:
        """Release every waiter (emergency use)."""
        for task_id in list(self._pending_modifications):
            self._resolve(task_id, False)
