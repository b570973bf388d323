from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import pytest

from starweave.galaxy.events import Event, EventBus, EventType, TaskEvent
from starweave.galaxy.observers import ConstellationProgressObserver

if TYPE_CHECKING:
    from conftest import Synth


class QueueAgent:
    """The two queues of the ConstellationAgent, as the observer sees them."""

    def __init__(self) -> None:
        self.task_completion_queue: asyncio.Queue[TaskEvent] = asyncio.Queue()
        self.constellation_completion_queue: asyncio.Queue[Event] = asyncio.Queue()

    async def add_task_completion_event(self, event: TaskEvent) -> None:
        await self.task_completion_queue.put(event)

    async def add_constellation_completion_event(self, event: Event) -> None:
        await self.constellation_completion_queue.put(event)


class BrokenAgent(QueueAgent):
    async def add_task_completion_event(self, event: TaskEvent) -> None:
        raise RuntimeError("queue closed")


async def test_completions_reach_the_agent_and_results_are_recorded(synth: type[Synth]) -> None:
    agent = QueueAgent()
    observer = ConstellationProgressObserver(agent)
    bus = EventBus()
    bus.subscribe(observer)
    await bus.publish_event(synth.task_event(EventType.TASK_STARTED, "t1", 1.0))
    assert agent.task_completion_queue.empty()
    assert observer.task_results["t1"]["status"] == "running"
    done = synth.task_event(EventType.TASK_COMPLETED, "t1", 2.0, result=synth.result("t1", "dev_a"))
    failed = synth.task_event(EventType.TASK_FAILED, "t2", 3.0, error="boom")
    await bus.publish_event(done)
    await bus.publish_event(failed)
    assert agent.task_completion_queue.get_nowait() is done
    assert agent.task_completion_queue.get_nowait() is failed
    assert observer.task_results["t2"] == {
        "task_id": "t2",
        "status": "failed",
        "result": None,
        "error": "boom",
        "timestamp": 3.0,
    }
    finished = synth.constellation_event(EventType.CONSTELLATION_COMPLETED, 4.0)
    await bus.publish_event(finished)
    assert agent.constellation_completion_queue.get_nowait() is finished
    assert agent.task_completion_queue.empty()


async def test_agent_errors_are_logged_not_raised(
    synth: type[Synth], caplog: pytest.LogCaptureFixture
) -> None:
    observer = ConstellationProgressObserver(BrokenAgent())
    with caplog.at_level(logging.ERROR, logger="starweave.galaxy.observers.progress"):
        await observer.on_event(synth.task_event(EventType.TASK_COMPLETED, "t1", 1.0))
    assert "Progress observer failed on task_completed" in caplog.text
    assert observer.task_results["t1"]["status"] == "completed"


async def test_progress_is_logged(synth: type[Synth], caplog: pytest.LogCaptureFixture) -> None:
    observer = ConstellationProgressObserver(QueueAgent())
    with caplog.at_level(logging.INFO, logger="starweave.galaxy.observers.progress"):
        await observer.on_event(synth.task_event(EventType.TASK_STARTED, "t9", 1.0))
    assert "Task progress: t9 -> running. Event Type: task_started" in caplog.text
