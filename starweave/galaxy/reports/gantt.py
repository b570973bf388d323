"""A Mermaid Gantt chart of task execution, one section per device."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from .loading import task_dicts
from .types import TaskTiming

UNASSIGNED = "unassigned"
_STATUS_TAGS = {
    "completed": "done",
    "failed": "crit",
    "timeout": "crit",
    "cancelled": "crit",
    "running": "active",
}
# Characters with a meaning in a Gantt line (":" splits name and data, "#" and ";" start entities/comments).
_UNSAFE = re.compile(r"[:#;\r\n]+")


def _label(text: object) -> str:
    return " ".join(_UNSAFE.sub(" ", str(text)).split()) or "task"


def _text(value: Any) -> str | None:
    """A logged id or name as text (None for missing or structured junk)."""
    if value is None or value == "" or isinstance(value, dict | list | bool):
        return None
    return str(value)


def _epoch(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


def timings_from_events(records: list[dict[str, Any]]) -> list[TaskTiming]:
    """Task bars from ``events.log`` records: TASK_STARTED opens a bar, TASK_COMPLETED/FAILED closes it."""
    bars: dict[str, TaskTiming] = {}
    for record in records:
        kind = record.get("event_type")
        task_id = _text(record.get("task_id"))
        stamp = _epoch(record.get("timestamp"))
        if not task_id or stamp is None or kind not in ("task_started", "task_completed", "task_failed"):
            continue
        bar = bars.get(task_id)
        if kind == "task_started":
            bars[task_id] = TaskTiming(
                task_id,
                stamp,
                None,
                _text(record.get("device_id")),
                _text(record.get("task_name")),
                "running",
            )
            continue
        if bar is None:  # ended without a start (never reached a device): a zero-length bar
            bar = bars[task_id] = TaskTiming(task_id, stamp, None, None, None)
        bar.end = stamp
        bar.status = _text(record.get("status")) or kind.removeprefix("task_")
        bar.device_id = _text(record.get("device_id")) or bar.device_id
        bar.name = _text(record.get("task_name")) or bar.name
    return list(bars.values())


def timings_from_constellation(data: dict[str, Any]) -> list[TaskTiming]:
    """Task bars from a constellation dict (``to_dict()``): tasks that started, with their device."""
    bars = []
    for task in task_dicts(data):
        start = _epoch(task.get("execution_start_time"))
        if start is None:
            continue
        bars.append(
            TaskTiming(
                str(task.get("task_id")),
                start,
                _epoch(task.get("execution_end_time")),
                _text(task.get("target_device_id")),
                _text(task.get("name")),
                _text(task.get("status")) or "completed",
            )
        )
    return bars


def gantt_chart(timings: list[TaskTiming], title: str = "Task execution per device") -> str:
    """Mermaid ``gantt`` source: a section per device (sorted; ``unassigned`` last), a bar per task
    from its start to its end (a still-running task ends at the latest time seen), tagged
    ``done``/``crit``/``active`` by status. Times are epoch milliseconds (``dateFormat x``)."""
    lines = ["gantt", f"    title {_label(title)}", "    dateFormat x", "    axisFormat %H:%M:%S"]
    if not timings:
        return "\n".join(lines) + "\n"
    horizon = max(max(t.start, t.end or t.start) for t in timings)
    by_device: dict[str, list[TaskTiming]] = {}
    for timing in timings:
        by_device.setdefault(timing.device_id or UNASSIGNED, []).append(timing)
    order = sorted(d for d in by_device if d != UNASSIGNED) + (
        [UNASSIGNED] if UNASSIGNED in by_device else []
    )
    index = 0
    for device in order:
        lines.append(f"    section {_label(device)}")
        for timing in sorted(by_device[device], key=lambda t: t.start):
            end = timing.end if timing.end is not None else horizon
            # Mermaid draws nothing for a zero-length bar; give it one millisecond.
            start_ms, end_ms = int(timing.start * 1000), max(int(end * 1000), int(timing.start * 1000) + 1)
            tag = _STATUS_TAGS.get(timing.status)
            meta = ", ".join(x for x in (tag, f"bar{index}", str(start_ms), str(end_ms)) if x)
            named = timing.name and timing.name != timing.task_id
            label = _label(f"{timing.name} ({timing.task_id})" if named else timing.task_id)
            lines.append(f"    {label} :{meta}")
            index += 1
    return "\n".join(lines) + "\n"
