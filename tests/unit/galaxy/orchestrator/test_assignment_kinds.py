"""Assignment respects a task's stated device kind (device_type) and required capabilities."""

from __future__ import annotations

from typing import Any

import pytest

from starweave.galaxy.constellation import DeviceType, TaskStar
from starweave.galaxy.orchestrator.assignment import STRATEGIES, ConstellationManager

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


def test_a_target_of_the_wrong_kind_is_replaced_and_a_right_one_kept() -> None:
    tasks = [
        task("gui", needs=["gui"], target="box"),
        task("shell", needs=["shell"], target="box"),
        task("free", target="phone"),  # no requirement: the plan's target stands
    ]
    plan = ConstellationManager.plan_assignments(tasks, DEVICES, "round_robin", {"shell": "desk"})
    assert plan == {"gui": "desk", "shell": "box", "free": "phone"}


def test_without_a_matching_device_any_device_is_used() -> None:
    plan = ConstellationManager.plan_assignments([task("w", DeviceType.WINDOWS)], DEVICES, "round_robin", {})
    assert plan == {"w": "box"}
