"""EvaluationAgent after a LinuxAgent run, on recorded answers: the evaluator's answer is the line
after the run's answers in the same replay file; the verdict goes to evaluation.log and the console."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.evaluation import RECORD_KEYS, verdict
from helpers.linux_replay import answer, read_jsonl, run

HOLDS_HELLO = "demo/a.txt holds hello"


async def test_a_passing_run_is_judged_yes(tmp_path: Path) -> None:
    answers = [
        answer("mkdir demo && echo 'hello' > demo/a.txt"),
        answer(None, "FINISH", result="demo/a.txt contains hello"),
        verdict("yes", "the file was written and holds hello", HOLDS_HELLO),
    ]
    result = await run(tmp_path, answers, request="write hello into demo/a.txt", evaluate=True)
    assert result["status"] == "FINISH"
    log_dir = tmp_path / "logs" / "run1"
    records = read_jsonl(log_dir / "evaluation.log")
    assert len(records) == 1
    assert list(records[0]) == RECORD_KEYS
    assert records[0]["complete"] == "yes"
    assert records[0]["level"] == "session" and records[0]["type"] == "evaluation_result"
    assert records[0]["request"] == "write hello into demo/a.txt"
    assert records[0]["sub_scores"] == [{"name": "demo/a.txt holds hello", "evaluation": "yes"}]
    # the evaluator saw the trajectory: its prompt is the last model call's
    calls = read_jsonl(log_dir / "llm.log")
    assert len(calls) == 3 and json.loads(calls[-1]["response"])["complete"] == "yes"
    console = (tmp_path / "console.txt").read_text()
    assert console.index(" done ") < console.index(" evaluation ─")
    assert "complete yes" in " ".join(console.split())
    # the run's own result is untouched by the verdict
    assert json.loads((log_dir / "result.json").read_text())["status"] == "FINISH"


async def test_a_failing_run_is_judged_no(tmp_path: Path) -> None:
    answers = [answer("cat missing.txt")] * 5 + [
        verdict("no", "missing.txt never existed; nothing was read", HOLDS_HELLO)
    ]
    result = await run(tmp_path, answers, request="show missing.txt", evaluate=True)
    assert result["status"] == "FAIL"
    records = read_jsonl(tmp_path / "logs" / "run1" / "evaluation.log")
    assert [r["complete"] for r in records] == ["no"]
    assert list(records[0]) == RECORD_KEYS
    assert "complete no" in " ".join((tmp_path / "console.txt").read_text().split())


async def test_an_evaluator_error_leaves_the_run_result_intact(tmp_path: Path, capsys: Any) -> None:
    # no answer left for the evaluator: the replay provider raises, as a failing model would
    answers = [answer(None, "FINISH", result="nothing to do")]
    result = await run(tmp_path, answers, evaluate=True)
    assert result["status"] == "FINISH" and result["result"] == "nothing to do"
    log_dir = tmp_path / "logs" / "run1"
    assert not (log_dir / "evaluation.log").exists()
    assert json.loads((log_dir / "result.json").read_text())["status"] == "FINISH"
    err = capsys.readouterr().err
    assert "warning: evaluation skipped:" in err and "all were used" in " ".join(err.split())


async def test_without_evaluate_no_verdict_is_asked_for(tmp_path: Path) -> None:
    answers = [answer(None, "FINISH", result="nothing to do"), verdict("yes", "unused", HOLDS_HELLO)]
    await run(tmp_path, answers)
    assert not (tmp_path / "logs" / "run1" / "evaluation.log").exists()
    assert len(read_jsonl(tmp_path / "logs" / "run1" / "llm.log")) == 1


async def test_eva_session_in_system_yaml_turns_it_on(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "ufo").mkdir(parents=True)
    (config / "ufo" / "system.yaml").write_text("EVA_SESSION: true\n")
    answers = [
        answer(None, "FINISH", result="nothing to do"),
        verdict("unsure", "no output shown", HOLDS_HELLO),
    ]
    await run(tmp_path, answers, config_dir=config)
    records = read_jsonl(tmp_path / "logs" / "run1" / "evaluation.log")
    assert [r["complete"] for r in records] == ["unsure"]
