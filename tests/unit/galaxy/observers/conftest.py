"""Synthetic constellations and events for the observer tests."""

from __future__ import annotations

import pytest

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.events import ConstellationEvent, DeviceEvent, EventType, TaskEvent
from starweave.galaxy.types import ExecutionResult


class Synth:
    """Builders shared by the tests (importlib mode cannot import conftest, so they come as a fixture)."""

    @staticmethod
    def diamond(cid: str = "c1") -> TaskConstellation:
        """t1 -> (t2, t3) -> t4 over three devices (t2 and t3 run in parallel)."""
        c = TaskConstellation(cid, name="diamond")
        for task_id, device in (("t1", "dev_a"), ("t2", "dev_b"), ("t3", "dev_c"), ("t4", "dev_a")):
            c.add_task(TaskStar(task_id=task_id, name=f"step {task_id}", target_device_id=device))
        for src, dst in (("t1", "t2"), ("t1", "t3"), ("t2", "t4"), ("t3", "t4")):
            c.add_dependency(TaskStarLine(src, dst, line_id=f"{src}_{dst}"))
        return c

    @staticmethod
    def task_event(
        kind: EventType, task_id: str, ts: float, c: TaskConstellation | None = None, **kw: object
    ) -> TaskEvent:
        data: dict[str, object] = {"constellation_id": "c1", "newly_ready_tasks": []}
        if c is not None:
            data["constellation"] = c
        status = {"task_started": "running", "task_completed": "completed", "task_failed": "failed"}[
            kind.value
        ]
        return TaskEvent(kind, "orchestrator_1", ts, data, task_id=task_id, status=status, **kw)  # type: ignore[arg-type]

    @staticmethod
    def constellation_event(kind: EventType, ts: float, **data: object) -> ConstellationEvent:
        return ConstellationEvent(kind, "orchestrator_1", ts, dict(data), constellation_id="c1")

    @staticmethod
    def device_event(device_id: str, status: str, ts: float = 0.0) -> DeviceEvent:
        info = {"device_id": device_id, "status": status, "os": "linux", "current_task_id": None}
        return DeviceEvent(
            EventType.DEVICE_STATUS_CHANGED,
            f"device_manager.{device_id}",
            ts,
            {"event_name": "device_status_changed", "device_count": 1},
            device_id=device_id,
            device_status=status,
            device_info=info,
            all_devices={device_id: info},
        )

    @staticmethod
    def result(
        task_id: str, device: str, status: str = "completed", error: str | None = None
    ) -> ExecutionResult:
        return ExecutionResult(task_id, status, result=f"output of {task_id}", error=error, device_id=device)


@pytest.fixture
def synth() -> type[Synth]:
    return Synth
