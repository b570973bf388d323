"""The `starweave` command as a user runs it: real processes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from starweave.agents.linux.response import LinuxAgentResponse
from starweave.llm.jsonschema import schema_errors

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


def starweave(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    full_env.update(env or {})
    return subprocess.run(
        [*STARWEAVE, *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def write_answers(path: Path, answers: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    return path


def test_run_with_replay_provider(tmp_path: Path) -> None:
    answers = write_answers(
        tmp_path / "a.jsonl",
        [
            {
                "observation": "none",
                "thought": "t",
                "action": {
                    "function": "execute_command",
                    "arguments": {"command": "echo hi > out.txt"},
                    "status": "CONTINUE",
                },
                "result": "",
            },
            {
                "observation": "ok",
                "thought": "t",
                "action": {"function": "", "arguments": {}, "status": "FINISH"},
                "result": "wrote out.txt",
            },
        ],
    )
    proc = starweave(
        "run",
        "write hi to out.txt",
        "--provider",
        "replay",
        "--replay-file",
        str(answers),
        "--workspace",
        "ws",
        "--log-dir",
        "logs",
        "--task",
        "t1",
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "FINISH"
    assert (tmp_path / "ws" / "out.txt").read_text() == "hi\n"
    assert (tmp_path / "logs" / "t1" / "response.log").exists()


def test_run_prints_steps_and_result(tmp_path: Path) -> None:
    answers = write_answers(
        tmp_path / "a.jsonl",
        [
            {
                "observation": "none",
                "thought": "nothing to do",
                "action": {"function": "", "arguments": {}, "status": "FINISH"},
                "result": "all good",
            }
        ],
    )
    proc = starweave(
        "run", "say ok", "--provider", "replay", "--replay-file", str(answers), "-w", "ws", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "Step 1" in proc.stdout and "all good" in proc.stdout


def test_failed_task_exits_1(tmp_path: Path) -> None:
    answers = write_answers(
        tmp_path / "a.jsonl",
        [
            {
                "observation": "none",
                "thought": "impossible",
                "action": {"function": "", "arguments": {}, "status": "FAIL"},
                "result": "cannot",
            }
        ],
    )
    proc = starweave(
        "run", "x", "--provider", "replay", "--replay-file", str(answers), "-w", "ws", "-q", cwd=tmp_path
    )
    assert proc.returncode == 1
    assert proc.stdout.strip() == "cannot"


FINISH_ANSWER = {
    "observation": "none",
    "thought": "nothing to do",
    "action": {"function": "", "arguments": {}, "status": "FINISH"},
    "result": "all good",
}


def run_evaluated(tmp_path: Path, answers: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """``starweave run "say ok" --evaluate`` on ``answers``, logging to ``logs/t1``."""
    replay = str(write_answers(tmp_path / "a.jsonl", answers))
    options = ["--provider", "replay", "--replay-file", replay, "-w", "ws", "--task", "t1", "--evaluate"]
    return starweave("run", "say ok", *options, cwd=tmp_path)


@pytest.mark.parametrize("verdict", ["yes", "no"])
def test_run_with_evaluate_prints_and_logs_the_verdict(tmp_path: Path, verdict: str) -> None:
    judged = {
        "reason": "judged",
        "sub_scores": [{"name": "say ok", "evaluation": verdict}],
        "complete": verdict,
    }
    proc = run_evaluated(tmp_path, [FINISH_ANSWER, judged])
    assert proc.returncode == 0, proc.stderr  # the verdict is advisory: the run's exit code stands
    out = " ".join(proc.stdout.split())
    assert out.index("all good") < out.index(f"complete {verdict}")
    record = json.loads((tmp_path / "logs" / "t1" / "evaluation.log").read_text())
    assert record == {
        "complete": verdict,
        "sub_scores": [{"name": "say ok", "evaluation": verdict}],
        "reason": "judged",
        "level": "session",
        "request": "say ok",
        "type": "evaluation_result",
    }


def test_run_with_evaluate_and_no_verdict_warns_and_keeps_the_exit_code(tmp_path: Path) -> None:
    proc = run_evaluated(tmp_path, [FINISH_ANSWER])
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "evaluation skipped" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: evaluation skipped:")
    assert not (tmp_path / "logs" / "t1" / "evaluation.log").exists()


def test_broken_config_is_a_clear_error_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "system.yaml").write_text("MAX_STEP: -5\n")
    proc = starweave("run", "x", "--provider", "replay", "--replay-file", "nope.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert "system.yaml: system.MAX_STEP" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_replay_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = starweave(
        "run", "x", "--provider", "replay", "--replay-file", "nope.jsonl", "-w", "ws", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "nope.jsonl" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_show_masks_secrets(tmp_path: Path) -> None:
    secret = "sk-test-1234567890abcdef"
    proc = starweave("config", "show", cwd=tmp_path, env={"STARWEAVE_APP_AGENT__API_KEY": secret})
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout
    assert "api_key: '****'" in proc.stdout
    assert "max_step: 20" in proc.stdout


def test_doctor_reports(tmp_path: Path) -> None:
    proc = starweave("doctor", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-doctor-secret-value"})
    assert proc.returncode == 0, proc.stderr
    for word in ("python", "embedded model", "providers", "sandbox"):
        assert word in proc.stdout
    assert "sk-doctor-secret-value" not in proc.stdout


@pytest.mark.slow
@pytest.mark.model
def test_run_on_the_embedded_model(tmp_path: Path) -> None:
    proc = starweave(
        "run",
        "Create a folder named demo and write the text hello into the file demo/a.txt",
        "-w",
        "ws",
        "--log-dir",
        "logs",
        "--task",
        "real",
        "--max-steps",
        "4",
        "--yes",
        "--json",
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode in (0, 1), proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] in ("FINISH", "FAIL")
    assert 1 <= result["steps"] <= 4
    log = tmp_path / "logs" / "real"
    requests = [json.loads(line) for line in (log / "request.log").read_text().splitlines()]
    calls = [json.loads(line) for line in (log / "llm.log").read_text().splitlines()]
    assert requests and calls, "no model call was logged"
    schema = requests[0]["schema"]
    for call in calls:
        if call["error"]:
            continue
        # every answer the model gave is valid per the response schema sent with the request
        answer = json.loads(call["response"])
        assert schema_errors(answer, schema) == [], answer
        LinuxAgentResponse.model_validate(answer)


def test_config_show_masks_the_bing_key(tmp_path: Path) -> None:
    secret = "bing-key-1234567890abcdef"
    proc = starweave("config", "show", "--json", cwd=tmp_path, env={"STARWEAVE_SYSTEM__BING_API_KEY": secret})
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout
    assert json.loads(proc.stdout)["system"]["bing_api_key"] == "****"
