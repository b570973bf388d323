"""Assignment respects a task's stated device kind (device_type) and required capabilities."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from starweave.galaxy.constellation import DeviceType, TaskStar
from starweave.galaxy.orchestrator.assignment import STRATEGIES, ConstellationManager, missing_requirements

DEVICES: list[dict[str, Any]] = [
    {"device_id": "box", "device_type": "linux", "capabilities": ["linux", "shell", "files"]},
    {
        "device_id": "desk",
        "device_type": "linux-desktop",
        "capabilities": ["linux", "desktop", "gui", "mousepad"],
    },
    {"device_id": "phone", "device_type": "mobile", "capabilities": ["mobile", "android", "touch"]},
]


def task(
    task_id: str, kind: DeviceType | None = None, needs: Any = None, target: str | None = None
) -> TaskStar:
    data = {"required_capabilities": needs} if needs is not None else {}
    return TaskStar(
        task_id=task_id, description=task_id, device_type=kind, task_data=data, target_device_id=target
    )


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_strategy_puts_each_task_on_a_device_of_its_kind(strategy: str) -> None:
    tasks = [
        task("gui1", DeviceType.LINUX_DESKTOP),
        task("gui2", needs=["gui", "mousepad"]),
        task("phone1", DeviceType.ANDROID),  # the reference's spelling of the phone
        task("phone2", DeviceType.MOBILE),
        task("shell", needs="shell"),
        task("gui3", needs=["GUI"]),
    ]
    plan = ConstellationManager.plan_assignments(tasks, DEVICES, strategy, {})
    assert plan == {
        "gui1": "desk",
        "gui2": "desk",
        "phone1": "phone",
        "phone2": "phone",
        "shell": "box",
        "gui3": "desk",
    }


def test_a_linux_task_may_go_to_a_linux_desktop() -> None:
    plan = ConstellationManager.plan_assignments(
        [task("a", DeviceType.LINUX), task("b", DeviceType.LINUX)], DEVICES, "load_balance", {}
    )
    assert plan == {"a": "box", "b": "desk"}


def test_a_target_of_the_wrong_kind_is_replaced_and_a_right_one_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = [
        task("gui", needs=["gui"], target="box"),
        task("shell", needs=["shell"], target="box"),
        task("free", target="phone"),  # no requirement: the plan's target stands
    ]
    with caplog.at_level(logging.WARNING, logger="starweave.galaxy.orchestrator"):
        plan = ConstellationManager.plan_assignments(tasks, DEVICES, "round_robin", {})
    assert plan == {"gui": "desk", "shell": "box", "free": "phone"}
    assert warnings(caplog) == ["Task 'gui': its device 'box' lacks capability 'gui'; choosing another"]


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_callers_preference_wins_over_the_plans_requirement_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = [
        task("shell", needs=["shell"], target="box"),
        task("phone", DeviceType.MOBILE, target="phone"),
        task("gone", target="box"),
    ]
    with caplog.at_level(logging.WARNING, logger="starweave.galaxy.orchestrator"):
        plan = ConstellationManager.plan_assignments(
            tasks, DEVICES, "round_robin", {"shell": "desk", "phone": "box", "gone": "laptop"}
        )
    assert plan == {"shell": "desk", "phone": "box", "gone": "box"}
    assert warnings(caplog) == [
        "Task 'shell': using the requested device 'desk' although it lacks capability 'shell' "
        "(an explicit device preference wins over the plan's requirement)",
        "Task 'phone': using the requested device 'box' although it lacks device kind 'mobile' "
        "(an explicit device preference wins over the plan's requirement)",
        "Task 'gone': the requested device 'laptop' is not connected (connected: box, desk, phone); "
        "choosing another",
    ]


def test_a_target_that_is_not_connected_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="starweave.galaxy.orchestrator"):
        plan = ConstellationManager.plan_assignments([task("a", target="gone")], DEVICES, "load_balance", {})
    assert plan == {"a": "box"}
    assert warnings(caplog) == [
        "Task 'a': its device 'gone' is not connected (connected: box, desk, phone); choosing another"
    ]


def test_without_a_matching_device_any_device_is_used_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = [task("w", DeviceType.WINDOWS, needs=["gui"]), task("fine", needs=["touch"])]
    with caplog.at_level(logging.WARNING, logger="starweave.galaxy.orchestrator"):
        plan = ConstellationManager.plan_assignments(tasks, DEVICES, "round_robin", {})
    assert plan == {"w": "box", "fine": "phone"}
    assert warnings(caplog) == [
        "Task 'w' needs device kind 'windows' and capability 'gui', which no connected device has "
        "(box (linux: linux, shell, files), desk (linux-desktop: linux, desktop, gui, mousepad), "
        "phone (mobile: mobile, android, touch)); assigning it to another device anyway, where it may fail"
    ]


@pytest.mark.parametrize("kind", [DeviceType.MACOS, "darwin", "MacOS"])
def test_a_macos_task_goes_to_a_darwin_device(kind: Any) -> None:
    devices = [*DEVICES, {"device_id": "mac", "device_type": "darwin", "capabilities": ["darwin", "shell"]}]
    missing = missing_requirements(str(getattr(kind, "value", kind)), [], devices[-1])
    assert missing == []
    if isinstance(kind, DeviceType):
        for strategy in STRATEGIES:
            assert ConstellationManager.plan_assignments([task("m", kind)], devices, strategy, {}) == {
                "m": "mac"
            }
