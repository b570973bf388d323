"""TaskConstellationOrchestrator with an in-memory DeviceExecutor: scheduling, results, failures,
events, validation and cancellation."""

from __future__ import annotations

import asyncio

import pytest
from unit.galaxy.orchestrator.orch_kit import FakeDevices, Recorder, eventually, make_constellation

from starweave.errors import OrchestrationError
from starweave.galaxy.constellation import DependencyType, TaskStatus
from starweave.galaxy.events import EventBus, EventType
from starweave.galaxy.orchestrator import RESULTS_HEADER, TaskConstellationOrchestrator

BOUND = 30.0  # generous: only a failing test waits this long


def setup(devices: FakeDevices | None = None) -> tuple[TaskConstellationOrchestrator, FakeDevices, Recorder]:
    devices = devices or FakeDevices()
    bus = EventBus()
    recorder = Recorder()
    bus.subscribe(recorder)
    return TaskConstellationOrchestrator(devices, event_bus=bus), devices, recorder


async def test_fan_out_runs_in_parallel() -> None:
    # b, c and d end only once all three run at once: one after another, they never would.
    together = asyncio.Event()
    orch, devices, _ = setup(FakeDevices(gates={"b": together, "c": together, "d": together}))
    c = make_constellation(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("a", "d")])
    async with asyncio.timeout(BOUND):
        run = asyncio.create_task(orch.orchestrate_constellation(c, assignment_strategy="round_robin"))
        await eventually(lambda: devices.running == 3)
        together.set()
        outcome = await run
    assert outcome["status"] == "completed"
    assert devices.max_running == 3
    assert devices.order()[0] == "a"


async def test_chain_runs_in_order_and_passes_results() -> None:
    orch, devices, _ = setup(FakeDevices(results={"a": "alpha-output", "b": {"rows": 3}}))
    c = make_constellation(["a", "b", "c"], [("a", "b"), ("b", "c")])
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert devices.order() == ["a", "b", "c"]
    assert devices.max_running == 1
    assert outcome["results"] == {"a": "alpha-output", "b": {"rows": 3}, "c": "result of c"}
    assert RESULTS_HEADER not in devices.call("a").request
    request_b = devices.call("b").request
    assert request_b.startswith("Task Description: do b")
    assert RESULTS_HEADER in request_b and "alpha-output" in request_b
    request_c = devices.call("c").request
    assert '"rows": 3' in request_c and "alpha-output" not in request_c  # only direct predecessors
    assert all(t.status is TaskStatus.COMPLETED for t in c.get_all_tasks())


async def test_failure_cancels_dependents_and_run_finishes() -> None:
    orch, devices, recorder = setup(FakeDevices(failures={"a"}))
    c = make_constellation(
        ["a", "b", "c", "x"], [("a", "b"), ("b", "c")], dependency_type=DependencyType.SUCCESS_ONLY
    )
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert outcome["status"] == "failed"
    assert "a failed on purpose" in outcome["errors"]["a"]
    assert sorted(devices.order()) == ["a", "x"]
    assert c.get_task("b").status is TaskStatus.CANCELLED
    assert c.get_task("c").status is TaskStatus.CANCELLED
    assert c.get_task("x").status is TaskStatus.COMPLETED
    failed = recorder.of(EventType.TASK_FAILED)
    assert [e.task_id for e in failed] == ["a"]
    assert failed[0].data["constellation"] is c
    assert len(recorder.of(EventType.CONSTELLATION_COMPLETED)) == 1


async def test_unconditional_edge_runs_after_failed_predecessor() -> None:
    orch, devices, _ = setup(FakeDevices(failures={"a"}))
    c = make_constellation(["a", "b"], [("a", "b")])
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert devices.order() == ["a", "b"]
    assert "(failed: a failed on purpose)" in devices.call("b").request
    assert outcome["status"] == "failed"  # not every task completed


async def test_executor_exception_fails_the_task_only() -> None:
    orch, _, _ = setup(FakeDevices(raises={"a"}))
    c = make_constellation(["a", "b"])
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert "device exploded on a" in outcome["errors"]["a"]
    assert outcome["results"] == {"b": "result of b"}
    assert c.get_task("a").status is TaskStatus.FAILED


async def test_events_and_payloads() -> None:
    orch, _, recorder = setup()
    c = make_constellation(["a", "b", "c"], [("a", "b"), ("a", "c")])
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c, assignment_strategy="load_balance")
    kinds = [e.event_type for e in recorder.events]
    assert kinds[0] is EventType.CONSTELLATION_STARTED and kinds[-1] is EventType.CONSTELLATION_COMPLETED
    started = recorder.events[0]
    assert started.data["constellation"] is c and started.data["total_tasks"] == 3
    assert started.data["assignment_strategy"] == "load_balance"
    assert started.constellation_state == "executing"
    assert started.source_id == f"orchestrator_{id(orch)}"
    task_started = recorder.of(EventType.TASK_STARTED)
    assert {e.task_id for e in task_started} == {"a", "b", "c"}
    assert all(e.status == "running" and e.data["constellation_id"] == "c1" for e in task_started)
    done = {e.task_id: e for e in recorder.of(EventType.TASK_COMPLETED)}
    assert sorted(done["a"].data["newly_ready_tasks"]) == ["b", "c"]
    assert done["a"].data["constellation"] is c and done["a"].result.result == "result of a"
    # a task's TASK_STARTED precedes its TASK_COMPLETED
    index = {(e.event_type, getattr(e, "task_id", "")): i for i, e in enumerate(recorder.events)}
    assert index[(EventType.TASK_STARTED, "b")] < index[(EventType.TASK_COMPLETED, "b")]
    final = recorder.events[-1]
    assert final.data["statistics"]["total_tasks"] == 3 and final.data["constellation"] is c
    assert final.constellation_state == "completed" and final.data["execution_duration"] >= 0
    assert outcome["statistics"]["task_status_counts"] == {"completed": 3}
    assert outcome["total_tasks"] == 3


async def test_the_constructor_strategy_serves_runs_that_name_none() -> None:
    devices, bus, recorder = FakeDevices(), EventBus(), Recorder()
    bus.subscribe(recorder)
    orch = TaskConstellationOrchestrator(devices, event_bus=bus, assignment_strategy="round_robin")
    c = make_constellation(["a", "b", "c"], device=None)
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(c)
    assert outcome["status"] == "completed"
    assert [devices.call(t).device_id for t in "abc"] == ["A", "B", "C"]
    assert recorder.events[0].data["assignment_strategy"] == "round_robin"


async def test_unassigned_tasks_without_devices_raise_before_running() -> None:
    orch, devices, recorder = setup(FakeDevices(devices={}))
    c = make_constellation(["a", "b"], device=None)
    async with asyncio.timeout(BOUND):
        with pytest.raises(ValueError, match="Task 'a' has no device assignment"):
            await orch.orchestrate_constellation(c)
        with pytest.raises(ValueError, match="No available devices"):
            await orch.orchestrate_constellation(c, assignment_strategy="round_robin")
    assert devices.calls == [] and recorder.events == []
    assert c.get_task("a").status is TaskStatus.PENDING


async def test_unknown_device_and_invalid_inputs_raise() -> None:
    orch, devices, _ = setup()
    c = make_constellation(["a"], device="nope")
    async with asyncio.timeout(BOUND):
        with pytest.raises(ValueError, match=r"unknown device 'nope'.*connected devices: \['A', 'B', 'C'\]"):
            await orch.orchestrate_constellation(c)
        with pytest.raises(ValueError, match="Unknown assignment strategy: fastest"):
            await orch.orchestrate_constellation(c, assignment_strategy="fastest")
        with pytest.raises(ValueError, match="unknown task 'zzz'"):
            await orch.orchestrate_constellation(c, device_assignments={"zzz": "A"})
        outcome = await orch.orchestrate_constellation(c, device_assignments={"a": "B"})
    assert outcome["status"] == "completed" and devices.call("a").device_id == "B"
    with pytest.raises(ValueError, match="Device manager not available"):
        await TaskConstellationOrchestrator(None, event_bus=EventBus()).orchestrate_constellation(
            make_constellation(["a"])
        )


async def test_empty_constellation_completes_at_once() -> None:
    orch, devices, _ = setup()
    async with asyncio.timeout(BOUND):
        outcome = await orch.orchestrate_constellation(make_constellation([]))
    assert outcome["status"] == "completed" and outcome["total_tasks"] == 0
    assert devices.calls == []


async def test_priority_orders_dispatch() -> None:
    from starweave.galaxy.constellation import TaskPriority

    orch, devices, _ = setup()
    c = make_constellation(["low", "high", "mid"])
    c.update_task("high", priority=TaskPriority.CRITICAL)
    c.update_task("low", priority=TaskPriority.LOW)
    async with asyncio.timeout(BOUND):
        await orch.orchestrate_constellation(c)
    assert devices.order() == ["high", "mid", "low"]


async def test_cancel_execution_cancels_running_and_marks_rest() -> None:
    orch, devices, recorder = setup(FakeDevices(delays={"a": 10.0, "b": 10.0}))
    c = make_constellation(["a", "b", "c"], [("a", "c")], device=None)
    async with asyncio.timeout(BOUND):
        run = asyncio.create_task(orch.orchestrate_constellation(c, assignment_strategy="round_robin"))
        await eventually(lambda: len(devices.calls) >= 2)
        assert orch.current_constellation is c
        assert await orch.cancel_execution("c1") is True
        outcome = await run
    assert outcome["status"] == "cancelled"
    assert all(call.cancelled for call in devices.calls)
    assert {t.status for t in c.get_all_tasks()} == {TaskStatus.CANCELLED}
    assert recorder.events[-1].constellation_state == "cancelled"
    assert await orch.cancel_execution("c1") is False


async def test_cancelling_the_orchestration_task_raises_and_cleans_up() -> None:
    orch, devices, _ = setup(FakeDevices(delays={"a": 10.0}))
    c = make_constellation(["a", "b"], [("a", "b")])
    async with asyncio.timeout(BOUND):
        run = asyncio.create_task(orch.orchestrate_constellation(c))
        await eventually(lambda: bool(devices.calls))
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert devices.call("a").cancelled
    assert c.get_task("a").status is TaskStatus.CANCELLED and c.get_task("b").status is TaskStatus.CANCELLED
    assert orch.constellation_manager.get_constellation("c1") is None


async def test_same_constellation_twice_at_once_is_refused() -> None:
    release = asyncio.Event()  # a runs until the second attempt was refused
    orch, devices, _ = setup(FakeDevices(gates={"a": release}))
    c = make_constellation(["a"])
    async with asyncio.timeout(BOUND):
        first = asyncio.create_task(orch.orchestrate_constellation(c))
        await eventually(lambda: bool(devices.calls))
        with pytest.raises(OrchestrationError, match="already being orchestrated"):
            await orch.orchestrate_constellation(c)
        release.set()
        assert (await first)["status"] == "completed"


async def test_status_while_running() -> None:
    release = asyncio.Event()  # a runs until its status was read
    orch, devices, _ = setup(FakeDevices(gates={"a": release}))
    c = make_constellation(["a", "b"], [("a", "b")])
    async with asyncio.timeout(BOUND):
        run = asyncio.create_task(orch.orchestrate_constellation(c, metadata={"who": "test"}))
        await eventually(lambda: bool(devices.calls))
        status = await orch.get_constellation_status(c)
        assert status is not None
        assert status["running_tasks"] == ["a"] and status["metadata"] == {"who": "test"}
        release.set()
        await run
    assert await orch.get_constellation_status(c) is None


async def test_task_timeout_is_passed_to_the_device() -> None:
    seen: list[float | None] = []

    class Timeouts(FakeDevices):
        async def assign_task_to_device(
            self,
            task_id,
            device_id,
            task_description,
            task_data=None,
            timeout=None,  # noqa: ASYNC109
            on_started=None,
        ):  # type: ignore[no-untyped-def]
            seen.append(timeout)
            return await super().assign_task_to_device(
                task_id, device_id, task_description, task_data, timeout
            )

    bus = EventBus()
    orch = TaskConstellationOrchestrator(Timeouts(), event_bus=bus, task_timeout=42.0)
    c = make_constellation(["a", "b"])
    c.update_task("b", timeout=7.0)
    async with asyncio.timeout(BOUND):
        await orch.orchestrate_constellation(c)
    assert sorted(seen) == [7.0, 42.0]
