"""ConstellationManager assignment strategies, validation and registry; build_task_request."""

from __future__ import annotations

import pytest
from unit.galaxy.orchestrator.orch_kit import FakeDevices, make_constellation

from starweave.galaxy.constellation import DeviceType, TaskStar, TaskStatus
from starweave.galaxy.events import EventBus
from starweave.galaxy.orchestrator import RESULTS_HEADER, ConstellationManager, build_task_request
from starweave.galaxy.types import ExecutionResult


def assigned(c) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.target_device_id for t in c.get_all_tasks()]


async def test_round_robin_spec_example() -> None:
    manager = ConstellationManager(FakeDevices())
    c = make_constellation([f"t{i}" for i in range(7)], device=None)
    plan = await manager.assign_devices_automatically(c, "round_robin")
    assert assigned(c) == ["A", "B", "C", "A", "B", "C", "A"]
    assert plan == {f"t{i}": d for i, d in enumerate("ABCABCA")}


async def test_preferences_and_existing_assignments_are_kept() -> None:
    manager = ConstellationManager(FakeDevices())
    c = make_constellation(["t0", "t1", "t2", "t3"], device=None)
    c.update_task("t1", target_device_id="C")
    c.update_task("t3", target_device_id="gone")  # not available: reassigned
    await manager.assign_devices_automatically(c, "round_robin", device_preferences={"t0": "B"})
    # the counter only advances for tasks without a usable preference
    assert assigned(c) == ["B", "C", "A", "B"]


async def test_capability_match_uses_device_type_and_spreads_load() -> None:
    devices = FakeDevices(devices={"L1": "linux", "W1": "windows", "L2": "linux"})
    manager = ConstellationManager(devices)
    c = make_constellation(["w", "l1", "l2", "any"], device=None)
    c.update_task("w", device_type=DeviceType.WINDOWS)
    c.update_task("l1", device_type=DeviceType.LINUX)
    c.update_task("l2", device_type=DeviceType.LINUX)
    c.update_task("any", device_type=DeviceType.ANDROID)  # no match: any device, least loaded
    await manager.assign_devices_automatically(c, "capability_match")
    assert assigned(c)[:3] == ["W1", "L1", "L2"]
    assert assigned(c)[3] in {"L1", "W1", "L2"}


async def test_load_balance_picks_least_loaded() -> None:
    manager = ConstellationManager(FakeDevices())
    c = make_constellation(["t0", "t1", "t2", "t3", "t4"], device=None)
    await manager.assign_devices_automatically(c, "load_balance", device_preferences={"t0": "A", "t1": "A"})
    assert assigned(c) == ["A", "A", "B", "C", "B"]
    assert manager.get_device_utilization(c) == {"A": 2, "B": 2, "C": 1}


async def test_assignment_errors() -> None:
    c = make_constellation(["t0"], device=None)
    with pytest.raises(ValueError, match="Device manager not available"):
        await ConstellationManager(None).assign_devices_automatically(c)
    with pytest.raises(ValueError, match="No available devices"):
        await ConstellationManager(FakeDevices(devices={})).assign_devices_automatically(c)
    with pytest.raises(ValueError, match="Unknown assignment strategy: best"):
        await ConstellationManager(FakeDevices()).assign_devices_automatically(c, "best")
    ok, errors = ConstellationManager().validate_constellation_assignments(c)
    assert not ok and errors == ["Task 't0' has no device assignment"]


async def test_tasks_that_ran_keep_their_device() -> None:
    manager = ConstellationManager(FakeDevices())
    c = make_constellation(["done", "todo"], device="C")
    c.start_task("done")
    c.mark_task_completed("done", True, "r")
    await manager.assign_devices_automatically(c, "round_robin")
    assert assigned(c) == ["C", "C"]  # todo keeps C as its preference; done is frozen
    assert manager.validate_constellation_assignments(c) == (True, [])
    assert manager.clear_device_assignments(c) == 1
    assert c.get_task("done").target_device_id == "C"


async def test_registry_and_device_info() -> None:
    manager = ConstellationManager(FakeDevices())
    c = make_constellation(["a", "b"], [("a", "b")])
    assert manager.register_constellation(c, {"k": 1}) == "c1"
    listing = manager.list_constellations()
    assert (
        listing[0]["task_count"] == 2
        and listing[0]["dependency_count"] == 1
        and listing[0]["metadata"] == {"k": 1}
    )
    status = await manager.get_constellation_status("c1")
    assert status is not None and status["ready_tasks"] == ["a"]
    assert manager.get_task_device_info(c, "a") == {
        "device_id": "A",
        "device_type": "linux",
        "capabilities": [],
        "metadata": {},
    }
    assert manager.reassign_task_device(c, "b", "C") and c.get_task("b").target_device_id == "C"
    assert manager.reassign_task_device(c, "zzz", "C") is False
    devices = manager.available_devices()
    assert [d["device_id"] for d in devices] == ["A", "B", "C"] and devices[2]["device_type"] == "windows"
    assert manager.unregister_constellation("c1") and await manager.get_constellation_status("c1") is None


def test_build_task_request_truncates_and_lists_predecessors() -> None:
    c = make_constellation(["a", "b", "c"], [("a", "c"), ("b", "c")])
    c.update_task("c", tips=["be quick"])
    c.start_task("a")
    c.mark_task_completed("a", True, ExecutionResult("a", "completed", result="x" * 5000))
    early = build_task_request(c.get_task("c"), c)
    assert "- a (a): " in early and "- b (b)" not in early  # b has not ended yet
    c.start_task("b")
    c.mark_task_completed(
        "b", True, {"task_id": "b", "status": "completed", "result": {"k": "v"}, "error": None}
    )
    text = build_task_request(c.get_task("c"), c, max_result_chars=100)
    head, block = text.split(RESULTS_HEADER)
    assert head.startswith("Task Description: do c\nTips for Completion:\n - be quick")
    assert "- a (a): " + "x" * 100 + "... [truncated, 4900 more characters]" in block
    assert '- b (b): {"k": "v"}' in block
    assert c.get_task("c").status is TaskStatus.PENDING
    assert build_task_request(TaskStar(task_id="loose", description="d"), c).startswith("Task Description: d")


async def test_a_strategy_added_to_the_table_is_selected_from_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from starweave.galaxy.orchestrator import STRATEGIES, TaskConstellationOrchestrator
    from starweave.galaxy.settings import ConstellationSettings

    def last_device(
        task: TaskStar, index: int, devices: list[dict[str, object]], load: dict[str, int]
    ) -> str:
        return str(devices[-1]["device_id"])

    monkeypatch.setitem(STRATEGIES, "last_device", last_device)
    settings = ConstellationSettings.model_validate({"ASSIGNMENT_STRATEGY": "last_device"})
    orchestrator = TaskConstellationOrchestrator(
        FakeDevices(), event_bus=EventBus(), assignment_strategy=settings.assignment_strategy
    )
    c = make_constellation(["t0", "t1"], device=None)
    outcome = await orchestrator.orchestrate_constellation(c)
    assert outcome["status"] == "completed" and assigned(c) == ["C", "C"]
