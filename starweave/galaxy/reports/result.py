"""``result.json`` in the reference's keys (spec B §8.3) from a :class:`SessionSummary`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from starweave.redaction import redact

from .loading import line_dicts, task_dicts
from .types import SessionSummary

RESULT_FILE = "result.json"


def local_iso(epoch: float) -> str:
    """Local time as ``YYYY-MM-DDTHH:MM:SS.ffffff`` (the reference's format, no zone)."""
    return datetime.fromtimestamp(epoch).isoformat(timespec="microseconds")


def _constellation_dict(constellation: Any) -> dict[str, Any] | None:
    if constellation is None:
        return None
    if isinstance(constellation, dict):
        return constellation
    data: dict[str, Any] = constellation.to_dict()
    return data


def _statistics(constellation: Any) -> dict[str, Any]:
    if constellation is None:
        return {}
    if hasattr(constellation, "get_statistics"):
        stats: dict[str, Any] = constellation.get_statistics()
        return stats
    # A dict (e.g. loaded from a log): the counts that can be had without rebuilding it.
    tasks = task_dicts(constellation)
    counts: dict[str, int] = {}
    for task in tasks:
        status = str(task.get("status", "pending"))
        counts[status] = counts.get(status, 0) + 1
    return {
        "constellation_id": constellation.get("constellation_id"),
        "name": constellation.get("name"),
        "state": constellation.get("state"),
        "total_tasks": len(tasks),
        "total_dependencies": len(line_dicts(constellation)),
        "task_status_counts": counts,
        "execution_duration": constellation.get("execution_duration"),
        "created_at": constellation.get("created_at"),
        "updated_at": constellation.get("updated_at"),
    }


def _constellation_block(constellation: Any) -> dict[str, Any] | None:
    data = _constellation_dict(constellation)
    if data is None:
        return None
    return {
        "id": data.get("constellation_id"),
        "name": data.get("name"),
        "task_count": len(task_dicts(data)),
        "dependency_count": len(line_dicts(data)),
        "state": data.get("state"),
    }


def build_result(summary: SessionSummary) -> dict[str, Any]:
    """The result dictionary: session_name, request, task_name, status, execution_time, rounds,
    start_time, end_time, trajectory_path, session_results{total_execution_time,
    final_constellation_stats, status, final_results, metrics}, constellation{id, name,
    task_count, dependency_count, state} (None when no constellation was built)."""
    total = (
        summary.total_execution_time if summary.total_execution_time is not None else summary.execution_time
    )
    result: dict[str, Any] = {
        "session_name": summary.session_name,
        "request": summary.request,
        "task_name": summary.task_name,
        "status": summary.status,
        "execution_time": summary.execution_time,
        "rounds": summary.rounds,
        "start_time": local_iso(summary.start_time),
        "end_time": local_iso(summary.end_time),
        "trajectory_path": summary.trajectory_path,
        "session_results": {
            "total_execution_time": total,
            "final_constellation_stats": _statistics(summary.final_constellation),
            "status": summary.agent_status,
            "final_results": list(summary.final_results),
            "metrics": summary.metrics,
        },
        "constellation": _constellation_block(summary.final_constellation),
    }
    result.update(summary.extra)
    return result


def write_result_json(folder: str | Path, summary: SessionSummary, secrets: Iterable[str] = ()) -> Path:
    """Write ``result.json`` into ``folder`` atomically (known secrets and key-shaped strings
    masked) and return its path."""
    target = Path(folder) / RESULT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_jsonable_python(build_result(summary), fallback=str), indent=2, ensure_ascii=False)
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(redact(text, secrets) + "\n", encoding="utf-8")
    tmp.replace(target)
    return target
