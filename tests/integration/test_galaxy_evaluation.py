"""The EvaluationAgent after a Galaxy session (real agent server, device clients over WebSockets,
replay answers): it judges the constellation's tasks against the request, writes evaluation.log in
the session's folder in the reference's shape, and never changes the session's outcome."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.evaluation import RECORD_KEYS, evaluation_log, verdict
from helpers.evaluation import judged as judged
from integration.test_galaxy_faults import D1, D2, edit, options, plan, run_client, task, write

# The answer-only call at the end of a plan that ends in two tasks.
FINAL = {"thought": "both done", "status": "FINISH", "action": [], "results": "ok on both devices"}


def evaluation_records(tmp_path: Path) -> list[dict[str, Any]]:
    return evaluation_log(tmp_path / "logs" / "run")


async def test_a_completed_constellation_is_judged_yes(tmp_path: Path, judged: list[Any]) -> None:
    # Two tasks that complete need no review call (REVIEW_MODE fast), only the answer that puts
    # their results together (the plan ends in both); the verdict is the next answer.
    planner = [
        plan([task("t1", D1, "Write ok to a.txt."), task("t2", D2, "Write ok to b.txt.")], []),
        FINAL,
        verdict("yes", "both tasks wrote their file"),
    ]
    outcome, client = await run_client(options(tmp_path, planner, "echo ok > a.txt", evaluate=True))
    assert outcome.status == "completed"
    records = evaluation_records(tmp_path)
    assert len(records) == 1 and list(records[0]) == RECORD_KEYS
    assert records[0]["complete"] == "yes" and records[0]["request"] == "do the work"
    assert records[0]["level"] == "session" and records[0]["type"] == "evaluation_result"
    # The judge saw each task with its device, status and result, and the session's status.
    user = judged[0][1]["content"]
    assert f"Task t1 't1' on device {D1} (status completed):" in user
    assert f"Task t2 't2' on device {D2} (status completed):" in user
    assert "description: Write ok to b.txt." in user and "result: finished" in user
    assert "Final status: completed (ConstellationAgent FINISH)" in user
    console = " ".join(client.console.export_text().split())
    assert console.index("COMPLETED") < console.index("complete yes")
    result = json.loads((tmp_path / "logs" / "run" / "result.json").read_text())
    assert result["status"] == "completed"


async def test_a_failed_constellation_is_judged_no_with_eva_session(
    tmp_path: Path, judged: list[Any]
) -> None:
    config = tmp_path / "config"
    (config / "ufo").mkdir(parents=True)
    (config / "ufo" / "system.yaml").write_text("EVA_SESSION: true\n")
    give_up = {
        "observation": "no hello.txt here",
        "thought": "I cannot do this",
        "action": {"function": "", "arguments": {}, "status": "FAIL"},
        "result": "hello.txt is not in this workspace",
    }
    planner = [plan([task("t1", D1, "Show hello.txt.")], []), edit(status="FAIL"), verdict("no", "t1 failed")]
    opts = options(tmp_path, planner, "echo unused", config_dir=config)
    opts.device_replay_file = write(tmp_path / "device.jsonl", [give_up])
    outcome, client = await run_client(opts)
    assert outcome.status == "failed"
    records = evaluation_records(tmp_path)
    assert [r["complete"] for r in records] == ["no"] and list(records[0]) == RECORD_KEYS
    user = judged[0][1]["content"]
    assert f"Task t1 't1' on device {D1} (status failed):" in user
    assert "error: the device agent ended with status FAIL: hello.txt is not in this workspace" in user
    assert "complete no" in " ".join(client.console.export_text().split())


async def test_no_verdict_is_a_warning_and_the_outcome_stands(tmp_path: Path, capsys: Any) -> None:
    planner = [plan([task("t1", D1, "Write ok."), task("t2", D2, "Write ok.")], []), FINAL]
    # nothing left for the judge
    outcome, _ = await run_client(options(tmp_path, planner, "echo ok > a.txt", evaluate=True))
    assert outcome.status == "completed"
    assert not (tmp_path / "logs" / "run" / "evaluation.log").exists()
    assert "warning: evaluation skipped:" in capsys.readouterr().err
