"""TaskQueueManager: per-device FIFO, withdrawal, clearing."""

from __future__ import annotations

import asyncio

from starweave.galaxy.devices.queue import QueuedTask, TaskQueueManager
from starweave.galaxy.types import ExecutionResult


def task(task_id: str, device_id: str = "d1") -> QueuedTask:
    return QueuedTask(task_id=task_id, device_id=device_id, description=f"do {task_id}")


async def test_fifo_per_device() -> None:
    queues = TaskQueueManager()
    for t in (task("a"), task("b"), task("x", "d2"), task("c")):
        queues.enqueue_task(t)
    assert queues.get_queued_task_ids("d1") == ["a", "b", "c"] and queues.get_queue_size("d2") == 1
    peeked = queues.peek_next_task("d1")
    first = queues.dequeue_task("d1")
    assert peeked is first and first is not None and first.task_id == "a"
    second = queues.dequeue_task("d1")
    assert second is not None and second.task_id == "b"
    queues.requeue_front(second)
    assert queues.get_queued_task_ids("d1") == ["b", "c"]
    assert queues.dequeue_task("nobody") is None and not queues.has_queued_tasks("nobody")


async def test_withdrawn_tasks_are_skipped_or_removed() -> None:
    queues = TaskQueueManager()
    a, b, c = task("a"), task("b"), task("c")
    for t in (a, b, c):
        queues.enqueue_task(t)
    a.future.cancel()  # its caller went away
    assert queues.get_queued_task_ids("d1") == ["b", "c"]
    assert queues.remove_task("d1", c) and not queues.remove_task("d1", c)
    nxt = queues.dequeue_task("d1")
    assert nxt is b and queues.dequeue_task("d1") is None


async def test_clearing_resolves_every_waiter() -> None:
    queues = TaskQueueManager()
    waiting = [task("a"), task("b")]
    futures = [queues.enqueue_task(t) for t in waiting]
    cleared = queues.clear_queue("d1", "failed", "device gone")
    assert [t.task_id for t in cleared] == ["a", "b"]
    results = await asyncio.gather(*futures)
    assert all(isinstance(r, ExecutionResult) for r in results)
    assert [(r.task_id, r.status, r.error, r.device_id) for r in results] == [
        ("a", "failed", "device gone", "d1"),
        ("b", "failed", "device gone", "d1"),
    ]
    assert not queues.has_queued_tasks("d1")
    late = task("c")
    queues.enqueue_task(late)
    queues.clear_queue("d1", "cancelled", "shutdown of d1")
    assert (await late.future).error == "shutdown of d1"
    late.resolve(ExecutionResult("c", "completed"))  # resolving twice is a no-op
    assert (await late.future).status == "cancelled"


async def test_contains_follows_enqueue_and_removal() -> None:
    manager = TaskQueueManager()
    task = QueuedTask(task_id="t", device_id="d", description="x")
    assert not manager.contains("d", task)
    manager.enqueue_task(task)
    assert manager.contains("d", task) and not manager.contains("other", task)
    assert manager.remove_task("d", task) and not manager.contains("d", task)
