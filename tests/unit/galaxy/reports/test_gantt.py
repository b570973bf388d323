from __future__ import annotations

import re
from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStar
from starweave.galaxy.reports import TaskTiming, gantt_chart, timings_from_constellation, timings_from_events


def test_sections_per_device_and_status_tags() -> None:
    chart = gantt_chart(
        [
            TaskTiming("b", 10.0, 12.5, "dev_b", "second", "failed"),
            TaskTiming("a", 10.0, 11.0, "dev_a", "first: setup; #1", "completed"),
            TaskTiming("c", 11.0, None, None, None, "running"),
            TaskTiming("d", 12.0, 12.0, "dev_a", None, "completed"),
        ]
    )
    lines = chart.splitlines()
    assert lines[:4] == [
        "gantt",
        "    title Task execution per device",
        "    dateFormat x",
        "    axisFormat %H:%M:%S",
    ]
    assert re.findall(r"^    section (\S+)$", chart, flags=re.M) == ["dev_a", "dev_b", "unassigned"]
    assert "    first setup 1 (a) :done, bar0, 10000, 11000" in lines
    assert "    d :done, bar1, 12000, 12001" in lines  # zero-length bar widened to 1 ms
    assert "    second (b) :crit, bar2, 10000, 12500" in lines
    assert "    c :active, bar3, 11000, 12500" in lines  # still running: ends at the latest time seen


def test_empty_chart_is_still_valid() -> None:
    assert gantt_chart([]).splitlines()[0] == "gantt"


def test_timings_from_events() -> None:
    records: list[dict[str, Any]] = [
        {"event_type": "task_started", "task_id": "x", "timestamp": 1.0, "device_id": "d1", "task_name": "X"},
        {"event_type": "agent_response", "timestamp": 1.5},
        {
            "event_type": "task_completed",
            "task_id": "x",
            "timestamp": 3.0,
            "status": "completed",
            "device_id": "d1",
        },
        {"event_type": "task_failed", "task_id": "y", "timestamp": 4.0, "status": "failed"},
        {"event_type": "task_started", "task_id": "z", "timestamp": "not a time"},
    ]
    by_id = {t.task_id: t for t in timings_from_events(records)}
    assert by_id["x"] == TaskTiming("x", 1.0, 3.0, "d1", "X", "completed")
    assert by_id["y"] == TaskTiming("y", 4.0, 4.0, None, None, "failed")
    assert "z" not in by_id


def test_timings_from_constellation() -> None:
    c = TaskConstellation("g")
    c.add_task(TaskStar(task_id="ran", target_device_id="dev_q"))
    c.add_task(TaskStar(task_id="never"))
    c.mark_task_completed("ran", True, "ok")
    (timing,) = timings_from_constellation(c.to_dict())
    assert (timing.task_id, timing.device_id, timing.status) == ("ran", "dev_q", "completed")
    assert timing.end is not None and timing.end >= timing.start
