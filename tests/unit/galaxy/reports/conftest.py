"""A synthetic Galaxy log folder, written by the real observers and report writers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.events import ConstellationEvent, EventBus, EventType, TaskEvent
from starweave.galaxy.observers import SessionLogObserver, SessionMetricsObserver
from starweave.galaxy.reports import SessionSummary
from starweave.galaxy.types import ExecutionResult

T0 = 1_700_000_000.0
DEVICES = {
    name: {
        "device_id": name,
        "os": "linux",
        "status": "idle",
        "capabilities": ["shell"],
        "last_heartbeat": None,
    }
    for name in ("dev_a", "dev_b", "dev_c")
}
# (task, device, start offset, end offset, success)
RUNS = [("t1", "dev_a", 0.0, 2.0, True), ("t2", "dev_b", 2.0, 5.0, True), ("t3", "dev_c", 2.0, 4.0, False)]


def diamond() -> TaskConstellation:
    c = TaskConstellation("c1", name="diamond")
    for task_id, device in (("t1", "dev_a"), ("t2", "dev_b"), ("t3", "dev_c"), ("t4", "dev_a")):
        c.add_task(
            TaskStar(task_id=task_id, name=f"step {task_id}", target_device_id=device, description="do it")
        )
    for src, dst in (("t1", "t2"), ("t1", "t3"), ("t2", "t4"), ("t3", "t4")):
        c.add_dependency(TaskStarLine(src, dst, line_id=f"{src}_{dst}"))
    return c


def step(
    n: int, status: str, before: str | None, after: str | None, actions: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "request": "collect logs from three machines and summarise",
        "agent_name": "constellation_agent",
        "agent_type": "ConstellationAgent",
        "status": status,
        "round_num": 0,
        "round_step": n,
        "total_time": 1.25,
        "cost": 0.002,
        "execution_times": {"LLM_INTERACTION": 1.0, "ACTION_EXECUTION": 0.25, "MEMORY_UPDATE": 0.0},
        "action": actions,
        "constellation_before": before,
        "constellation_after": after,
        "device_info": DEVICES,
    }


class LogFolder:
    """Builds ``request_x/`` with response.log, events.log and (optionally) result.json."""

    def __init__(self, root: Path) -> None:
        self.path = root / "request_x"
        self.path.mkdir()
        self.metrics = SessionMetricsObserver("galaxy_session_test_request_x")
        self.final: TaskConstellation | None = None

    async def build(self) -> LogFolder:
        bus = EventBus()
        bus.subscribe(SessionLogObserver(self.path))
        bus.subscribe(self.metrics)
        c = diamond()
        created = c.to_json()
        await bus.publish_event(
            ConstellationEvent(
                EventType.CONSTELLATION_STARTED, "orch", T0, {"constellation": c}, constellation_id="c1"
            )
        )
        for task_id, _device, start, _end, _ok in RUNS:
            await bus.publish_event(
                TaskEvent(
                    EventType.TASK_STARTED, "orch", T0 + start, {"constellation_id": "c1"}, task_id, "running"
                )
            )
        for task_id, device, _start, end, ok in sorted(RUNS, key=lambda r: r[3]):
            c.mark_task_completed(task_id, ok, f"out {task_id}" if ok else None, None if ok else "disk full")
            kind = EventType.TASK_COMPLETED if ok else EventType.TASK_FAILED
            result = ExecutionResult(task_id, "completed" if ok else "failed", device_id=device)
            data = {"constellation_id": "c1", "newly_ready_tasks": [], "constellation": c}
            await bus.publish_event(TaskEvent(kind, "orch", T0 + end, data, task_id, result.status, result))
        before_edit = c.to_json()
        c.add_task(TaskStar(task_id="t5", name="retry t3 on dev_b", target_device_id="dev_b"))
        await bus.publish_event(
            ConstellationEvent(
                EventType.CONSTELLATION_COMPLETED,
                "orch",
                T0 + 6.0,
                {"constellation": c},
                constellation_id="c1",
            )
        )
        lines = [
            step(
                1,
                "CONTINUE",
                None,
                created,
                [{"function": "build_constellation", "arguments": {"task_count": 4}}],
            ),
            step(
                2,
                "FINISH",
                before_edit,
                c.to_json(),
                [{"function": "add_task", "arguments": {"task_id": "t5", "name": "retry | t3"}}],
            ),
        ]
        (self.path / "response.log").write_text("".join(json.dumps(line) + "\n" for line in lines))
        self.final = c
        return self

    def summary(self) -> SessionSummary:
        return SessionSummary(
            session_name="galaxy_session_20260101_000000",
            request="collect logs from three machines and summarise",
            task_name="request_x",
            status="completed",
            start_time=T0 - 1.0,
            end_time=T0 + 7.5,
            rounds=1,
            trajectory_path=str(self.path) + "/",
            agent_status="FINISH",
            final_results=[{"request": "collect logs", "result": "summary written"}],
            metrics=self.metrics.get_metrics(),
            final_constellation=self.final,
        )


@pytest.fixture
async def log_folder(tmp_path: Path) -> LogFolder:
    return await LogFolder(tmp_path).build()
