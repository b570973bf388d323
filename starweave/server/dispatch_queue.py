"""Per-device queue of /api/dispatch tasks: one task at a time per device, the rest wait, none is lost.

A device runs one task at a time and ignores a TASK that arrives while it is busy (the reference's
rule), so a dispatch to a busy device used to answer 200 and vanish. Here a dispatch to a busy
device waits in that device's FIFO (at most ``max_queued`` tasks; a full queue is refused with
:class:`QueueFull`, which the API answers with 429). A device is busy while a session runs on it
(whoever started it) or while a dispatched TASK waits for the device to start it (its TASK echo).

Every queued task ends: it starts when the device is free; it ends FAILED (a refusal stored under its
task name, so /api/task_result reports it) when the device disconnects first, refuses it, or does not
start it within ``start_timeout`` (the device then also gets a TASK_END for it, which frees a device
that was wedged on it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from starweave.aip.builders import task_assignment
from starweave.aip.messages import ServerMessage
from starweave.errors import QueueFull
from starweave.server.registry import ClientConnectionManager, SendFn
from starweave.server.sessions import SessionManager

__all__ = ["DispatchQueue", "PendingTask"]

logger = logging.getLogger(__name__)


@dataclass
class PendingTask:
    """A dispatched task not started yet."""

    task_name: str
    session_id: str
    request: str
    submitted: float = field(default_factory=time.monotonic)


@dataclass
class _Line:
    """One device: the task sent and not yet started, and the tasks waiting behind it."""

    waiting: deque[PendingTask] = field(default_factory=deque)
    starting: PendingTask | None = None
    timer: asyncio.TimerHandle | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class DispatchQueue:
    """The dispatch queues of every device (single event loop; see the module docstring)."""

    def __init__(
        self,
        registry: ClientConnectionManager,
        sessions: SessionManager,
        *,
        max_queued: int,
        start_timeout: float,
    ) -> None:
        self.registry = registry
        self.sessions = sessions
        self.max_queued = max_queued
        self.start_timeout = start_timeout
        self._lines: dict[str, _Line] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    # ---- queries --------------------------------------------------------------------------
    def names(self) -> set[str]:
        """Task names waiting or starting (their reservations must not be pruned)."""
        out: set[str] = set()
        for line in self._lines.values():
            out.update(task.task_name for task in line.waiting)
            if line.starting is not None:
                out.add(line.starting.task_name)
        return out

    def queued(self, device_id: str) -> int:
        """Tasks waiting for ``device_id`` (not counting the one being started)."""
        line = self._lines.get(device_id)
        return len(line.waiting) if line else 0

    def busy(self, device_id: str) -> bool:
        """True while a session runs on the device or a dispatched task waits for its start."""
        line = self._lines.get(device_id)
        starting = line is not None and line.starting is not None
        return starting or bool(self.registry.get_device_sessions(device_id))

    # ---- submitting -----------------------------------------------------------------------
    async def submit(self, device_id: str, task: PendingTask) -> int:
        """Send ``task`` now (returns 0) or queue it (returns its place, from 1).

        Raises QueueFull when the device's queue is full and ConnectionError when the device is
        gone; the task name's reservation is the caller's to release then.
        """
        line = self._lines.setdefault(device_id, _Line())
        async with line.lock:
            if line.waiting or self.busy(device_id):
                if len(line.waiting) >= self.max_queued:
                    raise QueueFull(
                        f"Device '{device_id}' is busy and {len(line.waiting)} task(s) already wait for it "
                        f"(the limit is {self.max_queued}); retry after one of them finishes"
                    )
                line.waiting.append(task)
                logger.info(
                    "Task '%s' queued for busy device %s (#%d)", task.task_name, device_id, len(line.waiting)
                )
                return len(line.waiting)
            await self._start(device_id, line, task)
            return 0

    async def _start(self, device_id: str, line: _Line, task: PendingTask) -> None:
        info = self.registry.get_client_info(device_id)
        if info is None or not self.registry.is_device_connected(device_id):
            raise ConnectionError(f"Device '{device_id}' is not connected")
        line.starting = task
        self.sessions.names.touch(task.task_name)
        line.timer = asyncio.get_running_loop().call_later(
            self.start_timeout, self._expire, device_id, task.task_name
        )
        try:
            await info.send(task_assignment(task.request, task.task_name, task.session_id))
        except ConnectionError:
            self._clear_start(line)
            raise
        logger.info("Task '%s' sent to %s", task.task_name, device_id)

    @staticmethod
    def _clear_start(line: _Line) -> None:
        line.starting = None
        if line.timer is not None:
            line.timer.cancel()
            line.timer = None

    # ---- progress -------------------------------------------------------------------------
    def settled(self, device_id: str, task_name: str) -> None:
        """The device's TASK echo for ``task_name`` was handled (a session started, or it was refused)."""
        line = self._lines.get(device_id)
        if line is not None and line.starting is not None and line.starting.task_name == task_name:
            self._clear_start(line)
        self.kick(device_id)

    def device_refused(self, device_id: str, session_id: str | None, reason: str) -> None:
        """The device reported an ERROR about the task it was sent (e.g. too large, or busy)."""
        line = self._lines.get(device_id)
        task = line.starting if line is not None else None
        if line is None or task is None or session_id != task.session_id:
            return
        self._clear_start(line)
        self._refuse(task, f"Device '{device_id}' did not start the task: {reason}")
        self.kick(device_id)

    def _expire(self, device_id: str, task_name: str) -> None:
        line = self._lines.get(device_id)
        task = line.starting if line is not None else None
        if line is None or task is None or task.task_name != task_name:
            return
        self._clear_start(line)
        if task_name in self.sessions.names:  # still unclaimed: the device never started it
            end = self._refuse(
                task,
                f"Device '{device_id}' did not start the task within {self.start_timeout:g}s "
                "(it may be busy with a task from elsewhere, or unable to take it)",
            )
            info = self.registry.get_client_info(device_id)
            if info is not None:  # lets a device that is stuck on this task go
                self._spawn(_send_quiet(info.send, end, device_id))
        self.kick(device_id)

    def _refuse(self, task: PendingTask, reason: str) -> ServerMessage:
        logger.warning("Task '%s' failed before it started: %s", task.task_name, reason)
        return self.sessions.record_refusal(task.task_name, task.session_id, reason)

    def kick(self, device_id: str) -> None:
        """Start the device's next task if it is free (in the background)."""
        line = self._lines.get(device_id)
        if line is not None and line.waiting and not self.busy(device_id):
            self._spawn(self._pump(device_id))

    def kick_all(self) -> None:
        """:meth:`kick` every device with waiting tasks (a session ended somewhere)."""
        for device_id in list(self._lines):
            self.kick(device_id)

    async def _pump(self, device_id: str) -> None:
        line = self._lines.get(device_id)
        if line is None:
            return
        async with line.lock:
            while line.waiting and not self.busy(device_id):
                task = line.waiting.popleft()
                try:
                    await self._start(device_id, line, task)
                except ConnectionError as exc:
                    self._refuse(task, f"Device '{device_id}' disconnected before the task started ({exc})")

    def drop_device(self, device_id: str) -> int:
        """The device disconnected: every task not started yet ends FAILED; returns how many."""
        line = self._lines.pop(device_id, None)
        if line is None:
            return 0
        pending = list(line.waiting)
        if line.starting is not None and line.starting.task_name in self.sessions.names:
            pending.insert(0, line.starting)
        self._clear_start(line)
        line.waiting.clear()
        for task in pending:
            self._refuse(task, f"Device '{device_id}' disconnected before the task started")
        return len(pending)

    # ---- lifetime -------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Cancel timers and background sends (server shutdown)."""
        for line in self._lines.values():
            self._clear_start(line)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _send_quiet(send: SendFn, message: ServerMessage, device_id: str) -> None:
    try:
        await send(message)
    except ConnectionError as exc:
        logger.debug("TASK_END for an unstarted task not delivered to %s: %s", device_id, exc)
