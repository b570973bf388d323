from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from starweave.galaxy.reports import SessionSummary, build_result, write_result_json

if TYPE_CHECKING:
    from conftest import LogFolder

ISO_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$")


async def test_reference_keys(log_folder: LogFolder) -> None:
    result = build_result(log_folder.summary())
    assert list(result) == [
        "session_name",
        "request",
        "task_name",
        "status",
        "execution_time",
        "rounds",
        "start_time",
        "end_time",
        "trajectory_path",
        "session_results",
        "constellation",
    ]
    assert list(result["session_results"]) == [
        "total_execution_time",
        "final_constellation_stats",
        "status",
        "final_results",
        "metrics",
    ]
    assert result["execution_time"] == 8.5 and result["session_results"]["total_execution_time"] == 8.5
    assert ISO_LOCAL.match(result["start_time"]) and ISO_LOCAL.match(result["end_time"])
    assert result["session_results"]["status"] == "FINISH"
    stats = result["session_results"]["final_constellation_stats"]
    assert stats["total_tasks"] == 5 and stats["created_at"].endswith("+00:00")
    metrics = result["session_results"]["metrics"]
    assert metrics["session_id"] == "galaxy_session_test_request_x"
    assert metrics["task_statistics"]["failed_tasks"] == 1
    assert result["constellation"]["id"] == "c1" and result["constellation"]["task_count"] == 5


def test_without_constellation_and_with_dict(tmp_path: Path) -> None:
    summary = SessionSummary(
        "s", "req", "task", "failed", 10.0, 12.0, agent_status="FAIL", total_execution_time=1.5
    )
    result = build_result(summary)
    assert result["constellation"] is None and result["session_results"]["final_constellation_stats"] == {}
    assert result["session_results"]["total_execution_time"] == 1.5 and result["execution_time"] == 2.0
    summary.final_constellation = {
        "constellation_id": "k",
        "name": "n",
        "state": "completed",
        "tasks": {"a": {"status": "completed"}, "b": {"status": "failed"}},
        "dependencies": {"l": {}},
    }
    summary.extra = {"finish_reason": "manual"}
    path = write_result_json(tmp_path, summary)
    written = json.loads(path.read_text())
    assert written["constellation"] == {
        "id": "k",
        "name": "n",
        "task_count": 2,
        "dependency_count": 1,
        "state": "completed",
    }
    assert written["session_results"]["final_constellation_stats"]["task_status_counts"] == {
        "completed": 1,
        "failed": 1,
    }
    assert written["finish_reason"] == "manual"
    assert not list(tmp_path.glob("*.tmp"))
