"""ConstellationModificationSynchronizer: pending/resolved/timeout, merge rule, and agent edits
merged into a running orchestration (added tasks run, removed tasks do not)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from unit.galaxy.orchestrator.orch_kit import FakeDevices, Recorder, copy_of, eventually, make_constellation

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine, TaskStatus
from starweave.galaxy.events import ConstellationEvent, Event, EventBus, EventType, TaskEvent
from starweave.galaxy.orchestrator import (
    SYNC_EVENT_TYPES,
    ConstellationModificationSynchronizer,
    TaskConstellationOrchestrator,
    merge_constellation_states,
)
from starweave.galaxy.types import ExecutionResult

BOUND = 60.0  # generous: only a failing test waits this long


def task_done(task_id: str, cid: str = "c1") -> TaskEvent:
    return TaskEvent(EventType.TASK_COMPLETED, "test", data={"constellation_id": cid}, task_id=task_id)


def modified(task_ids: list[str], new: TaskConstellation | None = None) -> ConstellationEvent:
    return ConstellationEvent(
        EventType.CONSTELLATION_MODIFIED,
        "agent",
        data={"on_task_id": task_ids, "new_constellation": new, "old_constellation": None},
        constellation_id="c1",
    )


async def test_pending_resolved_by_modified_event() -> None:
    sync = ConstellationModificationSynchronizer(None, modification_timeout=600)
    async with asyncio.timeout(BOUND):
        await sync.on_event(task_done("a"))
        await sync.on_event(task_done("b"))
        await sync.on_event(task_done("a"))  # once per task
        await sync.on_event(TaskEvent(EventType.TASK_COMPLETED, "x", data={}, task_id="nocid"))
        assert sync.get_pending_task_ids() == ["a", "b"]
        waiter = asyncio.create_task(sync.wait_for_pending_modifications())
        await asyncio.sleep(0.05)
        await sync.on_event(modified(["a"]))
        await asyncio.sleep(0.05)
        assert not waiter.done() and sync.get_pending_count() == 1
        await sync.on_event(task_done("c"))  # a late arrival joins the same wait
        await sync.on_event(modified(["b"]))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        await sync.on_event(modified(["c"]))
        assert await waiter is True
    stats = sync.get_statistics()
    assert stats["total_modifications"] == 3 and stats["completed_modifications"] == 3
    assert not sync.has_pending_modifications()


async def test_pending_modification_times_out() -> None:
    sync = ConstellationModificationSynchronizer(None, modification_timeout=0.2)
    async with asyncio.timeout(BOUND):
        await sync.on_event(task_done("a"))
        start = time.monotonic()
        assert await sync.wait_for_pending_modifications() is True
        # released by its own timeout: not at once, and not after anything much longer
        assert 0.15 < time.monotonic() - start < 20.0
    assert sync.get_statistics()["timeout_modifications"] == 1


async def test_overall_wait_timeout_clears_pending() -> None:
    sync = ConstellationModificationSynchronizer(None, modification_timeout=60)
    async with asyncio.timeout(BOUND):
        await sync.on_event(task_done("a"))
        assert await sync.wait_for_pending_modifications(timeout=0.1) is False
    assert sync.get_pending_count() == 0
    with pytest.raises(ValueError, match="positive"):
        sync.set_modification_timeout(0)
    with pytest.raises(ValueError, match="positive"):
        ConstellationModificationSynchronizer(None, modification_timeout=-1)


def test_merge_rule() -> None:
    orch = make_constellation(["a", "b", "c", "d"], [("a", "b"), ("c", "d")])
    agent = copy_of(orch)  # the agent's copy, taken while everything was pending
    orch.start_task("a")
    orch.mark_task_completed("a", True, ExecutionResult("a", "completed", result="A!"))
    orch.start_task("c")
    # the agent edits: removes d, adds e after a, rewrites b's description
    agent.remove_task("d")
    agent.add_task(TaskStar(task_id="e", description="new", target_device_id="A"))
    agent.add_dependency(TaskStarLine("a", "e"))
    agent.update_task("b", description="do b with A!")
    merged = merge_constellation_states(agent, orch)
    assert merged is not orch and merged is not agent
    assert merged.get_task("d") is None  # removed by the agent
    assert merged.get_task("a").status is TaskStatus.COMPLETED  # orchestrator's state wins
    assert merged.get_task("a").result["result"] == "A!"
    assert merged.get_task("a").execution_end_time == orch.get_task("a").execution_end_time
    assert merged.get_task("c").status is TaskStatus.RUNNING
    assert merged.get_task("b").description == "do b with A!"  # agent's structure wins
    assert sorted(t.task_id for t in merged.get_ready_tasks()) == ["b", "e"]  # a ended: successors ready
    assert merged.execution_start_time is None or merged.execution_start_time == orch.execution_start_time


def test_merge_never_overrides_a_terminal_state_and_cancels_unsatisfiable() -> None:
    from starweave.galaxy.constellation import DependencyType

    orch = make_constellation(["a", "b"], [("a", "b")], dependency_type=DependencyType.SUCCESS_ONLY)
    agent = copy_of(orch)
    orch.start_task("a")
    orch.mark_task_completed("a", False, error="boom")
    merged = merge_constellation_states(agent, orch)
    assert merged.get_task("a").status is TaskStatus.FAILED
    assert merged.get_task("b").status is TaskStatus.CANCELLED  # can never be satisfied
    assert merged.is_complete()
    # all terminal states rank equal: the agent's FAILED stays even if the orchestrator says COMPLETED
    orch2 = make_constellation(["x"])
    agent2 = copy_of(orch2)
    orch2.start_task("x")
    orch2.mark_task_completed("x", True, "ok")
    agent2.start_task("x")
    agent2.mark_task_completed("x", False, error="agent view")
    assert merge_constellation_states(agent2, orch2).get_task("x").status is TaskStatus.FAILED


def test_synchronizer_merge_uses_latest_agent_copy_of_same_constellation() -> None:
    sync = ConstellationModificationSynchronizer(None)
    orch = make_constellation(["a"])
    assert sync.merge_and_sync_constellation_states(orch) is orch  # nothing from the agent yet
    other = make_constellation(["z"], cid="other")
    asyncio.run(sync.on_event(modified([], other)))
    assert sync.merge_and_sync_constellation_states(orch) is orch  # a different constellation is ignored
    agent = copy_of(orch)
    agent.add_task(TaskStar(task_id="b", description="b", target_device_id="A"))
    asyncio.run(sync.on_event(modified([], agent)))
    merged = sync.merge_and_sync_constellation_states(orch)
    assert merged.get_task("b") is not None and sync.get_current_constellation() is merged


class FakeAgent:
    """Answers each TASK_COMPLETED/FAILED after ``delay`` with CONSTELLATION_MODIFIED, editing
    a copy of the event's constellation with ``edit`` (as the ConstellationAgent does)."""

    def __init__(
        self, bus: EventBus, edit: Callable[[str, TaskConstellation], None], delay: float = 0.05
    ) -> None:
        self.bus, self.edit, self.delay = bus, edit, delay
        self.published: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def on_event(self, event: Event) -> None:
        if event.event_type in (EventType.TASK_COMPLETED, EventType.TASK_FAILED):
            assert isinstance(event, TaskEvent)
            task = asyncio.create_task(self._answer(event.task_id, event.data["constellation"]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, task_id: str, constellation: TaskConstellation) -> None:
        await asyncio.sleep(self.delay)
        new = copy_of(constellation)
        self.edit(task_id, new)
        self.published[task_id] = time.monotonic()
        await self.bus.publish_event(modified([task_id], new))


def wired(devices: FakeDevices, edit: Callable[[str, TaskConstellation], None], timeout: float = 600.0):  # type: ignore[no-untyped-def]
    bus = EventBus()
    orch = TaskConstellationOrchestrator(devices, event_bus=bus)
    sync = ConstellationModificationSynchronizer(orch, modification_timeout=timeout)
    bus.subscribe(sync, SYNC_EVENT_TYPES)
    orch.set_modification_synchronizer(sync)
    agent = FakeAgent(bus, edit)
    bus.subscribe(agent)
    recorder = Recorder()
    bus.subscribe(recorder)
    return orch, sync, agent, recorder


async def test_edit_adding_a_task_mid_run_is_executed_after_the_edit() -> None:
    def edit(task_id: str, c: TaskConstellation) -> None:
        if task_id == "a":
            c.add_task(TaskStar(task_id="extra", description="added by agent", target_device_id="B"))
            c.add_dependency(TaskStarLine("a", "extra"))
            c.update_task("b", description="do b using result of a")

    devices = FakeDevices()
    orch, sync, agent, _ = wired(devices, edit)
    c = make_constellation(["a", "b"], [("a", "b")])
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert outcome["status"] == "completed"
    assert sorted(devices.order()) == ["a", "b", "extra"]
    # gating: b (ready once a ended) was dispatched only after the agent's edit for a
    assert devices.call("b").started >= agent.published["a"]
    assert "do b using result of a" in devices.call("b").request
    assert "result of a" in devices.call("extra").request
    live = orch.current_constellation
    assert live is not None and live is not c
    assert {t.task_id: t.status for t in live.get_all_tasks()} == {
        "a": TaskStatus.COMPLETED,
        "b": TaskStatus.COMPLETED,
        "extra": TaskStatus.COMPLETED,
    }
    assert outcome["total_tasks"] == 3
    assert sync.get_statistics()["completed_modifications"] == 3


async def test_edit_removing_a_pending_task_prevents_it() -> None:
    def edit(task_id: str, c: TaskConstellation) -> None:
        if task_id == "a":
            c.remove_task("b")

    devices = FakeDevices()
    orch, _, _, _ = wired(devices, edit)
    c = make_constellation(["a", "b", "c"], [("a", "b"), ("b", "c")])
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert "b" not in devices.order()
    assert sorted(devices.order()) == ["a", "c"]  # c lost its only prerequisite: free to run
    assert outcome["status"] == "completed" and outcome["total_tasks"] == 2


async def test_running_task_result_recorded_into_merged_constellation() -> None:
    def edit(task_id: str, c: TaskConstellation) -> None:
        if task_id == "fast":
            c.add_task(TaskStar(task_id="late", description="late", target_device_id="C"))

    # slow runs until the task the agent added has started, i.e. across the merge of the edit
    release = asyncio.Event()
    devices = FakeDevices(gates={"slow": release})
    orch, _, _, _ = wired(devices, edit)
    c = make_constellation(["fast", "slow"], device=None)
    async with asyncio.timeout(BOUND):
        run = asyncio.create_task(orch.orchestrate_constellation(c, assignment_strategy="round_robin"))
        await eventually(lambda: "late" in devices.order())
        assert not devices.call("slow").ended
        release.set()
        outcome = await run
    live = orch.current_constellation
    assert live is not None and live is not c
    assert live.get_task("slow").status is TaskStatus.COMPLETED  # ran across the merge
    assert outcome["results"]["slow"] == "result of slow"
    assert sorted(devices.order()) == ["fast", "late", "slow"]


async def test_silent_agent_times_out_and_run_continues() -> None:
    devices = FakeDevices()
    bus = EventBus()
    orch = TaskConstellationOrchestrator(devices, event_bus=bus)
    sync = ConstellationModificationSynchronizer(orch, modification_timeout=0.2)
    bus.subscribe(sync, SYNC_EVENT_TYPES)
    orch.set_modification_synchronizer(sync)
    c = make_constellation(["a", "b"], [("a", "b")])
    async with asyncio.timeout(BOUND):
        start = time.monotonic()
        outcome = await orch.orchestrate_constellation(c)
    assert outcome["status"] == "completed"
    assert time.monotonic() - start >= 0.35  # two edits awaited, each released by its timeout
    assert sync.get_statistics()["timeout_modifications"] == 2


async def test_cancel_while_waiting_for_an_edit() -> None:
    devices = FakeDevices()
    bus = EventBus()
    orch = TaskConstellationOrchestrator(devices, event_bus=bus)
    sync = ConstellationModificationSynchronizer(orch, modification_timeout=60)
    bus.subscribe(sync, SYNC_EVENT_TYPES)
    orch.set_modification_synchronizer(sync)
    c = make_constellation(["a", "b"], [("a", "b")])
    async with asyncio.timeout(BOUND):
        run = asyncio.create_task(orch.orchestrate_constellation(c))
        await eventually(sync.has_pending_modifications)
        await orch.cancel_execution("c1")
        outcome = await run
    assert outcome["status"] == "cancelled"
    assert c.get_task("b").status is TaskStatus.CANCELLED and devices.order() == ["a"]
