"""The Galaxy event bus: typed delivery, wildcard observers, isolation of failing observers."""

from __future__ import annotations

import asyncio
import logging

import pytest

from starweave.galaxy.events import (
    DeviceEvent,
    Event,
    EventBus,
    EventType,
    IEventObserver,
    TaskEvent,
    get_event_bus,
)
from starweave.galaxy.types import ExecutionResult


class Recorder:
    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.events: list[Event] = []
        self.delay = delay
        self.fail = fail

    async def on_event(self, event: Event) -> None:
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("observer bug")
        self.events.append(event)


async def test_typed_and_wildcard_subscriptions() -> None:
    bus = EventBus()
    tasks, everything = Recorder(), Recorder()
    bus.subscribe(tasks, {EventType.TASK_COMPLETED, EventType.TASK_FAILED})
    bus.subscribe(everything)
    bus.subscribe(everything)  # twice: still delivered once
    done = TaskEvent(EventType.TASK_COMPLETED, "orchestrator", task_id="t1", status="completed")
    device = DeviceEvent(EventType.DEVICE_CONNECTED, "device_manager", device_id="d1", device_status="idle")
    await bus.publish_event(done)
    await bus.publish_event(device)
    assert tasks.events == [done] and everything.events == [done, device]
    assert isinstance(tasks, IEventObserver)
    bus.unsubscribe(everything)
    await bus.publish_event(done)
    assert len(everything.events) == 2 and len(tasks.events) == 2
    assert bus.observers_for(EventType.AGENT_ACTION) == []


class Meeting(Recorder):
    """Records an event only once every observer of the meeting holds it: run one after another,
    the first would wait for the others for ever."""

    def __init__(self, arrived: list[Meeting], everyone: asyncio.Event, size: int) -> None:
        super().__init__()
        self.arrived, self.everyone, self.size = arrived, everyone, size

    async def on_event(self, event: Event) -> None:
        self.arrived.append(self)
        if len(self.arrived) == self.size:
            self.everyone.set()
        await self.everyone.wait()
        self.events.append(event)


async def test_observers_run_concurrently_and_failures_are_isolated(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    arrived: list[Meeting] = []
    everyone = asyncio.Event()
    slow_a, slow_b, broken = Meeting(arrived, everyone, 2), Meeting(arrived, everyone, 2), Recorder(fail=True)
    for observer in (slow_a, broken, slow_b):
        bus.subscribe(observer)
    event = Event(EventType.CONSTELLATION_STARTED, "orchestrator", data={"total_tasks": 3})
    with caplog.at_level(logging.ERROR, logger="starweave.galaxy.events"):
        async with asyncio.timeout(30):  # only reached if the observers ran one after another
            await bus.publish_event(event)
    assert slow_a.events == [event] and slow_b.events == [event]
    assert "failed on constellation_started" in caplog.text


def test_default_bus_is_shared_and_event_fields() -> None:
    assert get_event_bus() is get_event_bus()
    event = TaskEvent(EventType.TASK_FAILED, "o", task_id="t", status="failed", error="boom")
    assert event.timestamp > 0 and event.data == {} and event.event_type.value == "task_failed"
    assert [t.value for t in EventType][:3] == ["task_started", "task_completed", "task_failed"]


def test_execution_result() -> None:
    ok = ExecutionResult("t", "completed", result="done", start_time=10.0, end_time=12.5)
    assert ok.is_successful and ok.execution_time == 2.5 and ok.to_dict()["execution_time"] == 2.5
    failed = ExecutionResult("t", "completed", error="late error")
    assert not failed.is_successful and failed.execution_time is None
    assert not ExecutionResult("t", "timeout").is_successful
