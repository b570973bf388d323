"""TaskQueueManager: one FIFO of waiting tasks per device (spec B §1.3, E §9.7).

A queued task carries the future its caller awaits; the device manager resolves it with the task's
ExecutionResult. Tasks stay queued while their device reconnects; they leave the queue when they
start, when their caller withdraws them, or when the device is given up (every waiting caller then
gets a result saying why).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starweave.galaxy.types import ExecutionResult, now

__all__ = ["QueuedTask", "TaskQueueManager"]


@dataclass
class QueuedTask:
    """One task waiting for (or running on) its device."""

    task_id: str
    device_id: str
    description: str
    task_data: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    future: asyncio.Future[ExecutionResult] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    enqueued_at: float = field(default_factory=now)
    # Awaited when the device starts the task (the orchestrator publishes TASK_STARTED then).
    on_started: Callable[[], Awaitable[None]] | None = None
    rejections: int = 0

    def resolve(self, result: ExecutionResult) -> None:
        """Hand ``result`` to the waiting caller (no-op once resolved or withdrawn)."""
        if not self.future.done():
            self.future.set_result(result)


class TaskQueueManager:
    """Per-device FIFO queues of QueuedTask."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[QueuedTask]] = {}

    def enqueue_task(self, task: QueuedTask) -> asyncio.Future[ExecutionResult]:
        """Append ``task`` to its device's queue; returns the future its result will land in."""
        self._queues.setdefault(task.device_id, deque()).append(task)
        return task.future

    def requeue_front(self, task: QueuedTask) -> None:
        """Put ``task`` back at the head of its queue (it never started)."""
        self._queues.setdefault(task.device_id, deque()).appendleft(task)

    def dequeue_task(self, device_id: str) -> QueuedTask | None:
        """The oldest waiting task of ``device_id`` (withdrawn ones are skipped), or None."""
        queue = self._queues.get(device_id)
        while queue:
            task = queue.popleft()
            if not task.future.done():
                return task
        return None

    def peek_next_task(self, device_id: str) -> QueuedTask | None:
        """The task :meth:`dequeue_task` would return, left in place."""
        for task in self._queues.get(device_id, ()):
            if not task.future.done():
                return task
        return None

    def remove_task(self, device_id: str, task: QueuedTask) -> bool:
        """Withdraw ``task`` from the queue; False if it was not queued."""
        queue = self._queues.get(device_id)
        if queue is None or task not in queue:
            return False
        queue.remove(task)
        return True

    def contains(self, device_id: str, task: QueuedTask) -> bool:
        """True while ``task`` waits in the queue of ``device_id``."""
        return task in self._queues.get(device_id, ())

    def get_queue_size(self, device_id: str) -> int:
        """How many tasks wait for ``device_id``."""
        return sum(1 for t in self._queues.get(device_id, ()) if not t.future.done())

    def has_queued_tasks(self, device_id: str) -> bool:
        """True if a task waits for ``device_id``."""
        return self.get_queue_size(device_id) > 0

    def get_queued_task_ids(self, device_id: str) -> list[str]:
        """The waiting task ids of ``device_id``, oldest first."""
        return [t.task_id for t in self._queues.get(device_id, ()) if not t.future.done()]

    def clear_queue(self, device_id: str, status: str, error: str) -> list[QueuedTask]:
        """Empty the queue of ``device_id``, resolving each waiter with ``status`` and ``error``."""
        queue = self._queues.pop(device_id, deque())
        cleared: list[QueuedTask] = []
        for task in queue:
            if task.future.done():
                continue
            task.resolve(
                ExecutionResult(
                    task_id=task.task_id,
                    status=status,
                    error=error,
                    device_id=device_id,
                    metadata={"error_category": "not_started", "queued": True},
                    start_time=None,
                    end_time=now(),
                )
            )
            cleared.append(task)
        return cleared
