"""`starweave galaxy` as a user runs it: a real process that starts its own local fleet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


def galaxy(
    *args: str, cwd: Path, timeout: float = 120, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    return subprocess.run(
        [*STARWEAVE, "galaxy", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def write(path: Path, answers: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    return path


# The plan ends in both tasks, so (review mode "fast") one answer-only call puts their results
# together once they completed.
ANSWER = "Both devices wrote hello.txt."
FINAL = {"thought": "both done", "status": "FINISH", "action": [], "results": ANSWER}


def planner_answers(count: int) -> list[dict[str, Any]]:
    """The plan, ``count`` reviews without edits, and the final answer."""
    tasks = [
        {
            "task_id": f"t{i}",
            "name": f"greet {i}",
            "description": "Write hello to hello.txt.",
            "target_device_id": f"local_linux_{i}",
            "tips": [],
        }
        for i in (1, 2)
    ]
    plan = {
        "thought": "one task per device",
        "status": "CONTINUE",
        "constellation": {"tasks": tasks, "dependencies": []},
    }
    return [plan, *[{"thought": "ok", "status": "CONTINUE", "action": []}] * count, FINAL]


DEVICE = [
    {
        "observation": "o",
        "thought": "t",
        "action": {
            "function": "execute_command",
            "arguments": {"command": "echo hello > hello.txt"},
            "status": "CONTINUE",
        },
        "result": "",
    },
    {
        "observation": "o",
        "thought": "t",
        "action": {"function": "", "arguments": {}, "status": "FINISH"},
        "result": "done",
    },
]


def hello_on_two(
    tmp_path: Path, planner: list[Any], task_name: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``galaxy "say hello on both devices" --local 2`` on the replay provider."""
    return galaxy(
        "say hello on both devices",
        "--local",
        "2",
        "--provider",
        "replay",
        "--replay-file",
        str(write(tmp_path / "planner.jsonl", planner)),
        "--device-replay-file",
        str(write(tmp_path / "device.jsonl", DEVICE)),
        "--task-name",
        task_name,
        "--yes",
        *extra,
        cwd=tmp_path,
    )


def test_galaxy_local_fleet_with_replay(tmp_path: Path) -> None:
    # The plan and the final answer: two tasks that complete need no review call (REVIEW_MODE fast).
    proc = hello_on_two(tmp_path, planner_answers(0), "hello")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Devices online: local_linux_1, local_linux_2" in proc.stdout
    assert "COMPLETED" in proc.stdout and "logs/galaxy/hello" in proc.stdout
    for device in ("local_linux_1", "local_linux_2"):
        assert (tmp_path / "galaxy_workspace" / device / "hello.txt").read_text() == "hello\n"
    result = json.loads((tmp_path / "logs" / "galaxy" / "hello" / "result.json").read_text())
    assert result["status"] == "completed" and result["constellation"]["task_count"] == 2
    final = result["session_results"]["final_results"][0]
    assert final["answer"] == ANSWER
    # The user reads the answer at once, above the pointer to the logs.
    assert f"Answer: {ANSWER}" in proc.stdout
    assert final["result"]["t1"] == {
        "status": "completed",
        "device": "local_linux_1",
        "result": "done",
        "error": None,
    }
    assert "Traceback" not in proc.stderr


def test_galaxy_evaluate_prints_and_logs_the_verdict_and_keeps_the_exit_code(tmp_path: Path) -> None:
    judged = {"reason": "both devices wrote hello.txt", "sub_scores": [], "complete": "no"}
    # The plan and its answer, then the EvaluationAgent's verdict (it judges on the planner's model).
    proc = hello_on_two(tmp_path, [*planner_answers(0), judged], "judged", "--evaluate")
    # The verdict is advisory: a "no" leaves the completed run's exit code 0.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    assert out.index("COMPLETED") < out.index("complete no")
    record = json.loads((tmp_path / "logs" / "galaxy" / "judged" / "evaluation.log").read_text())
    assert record == {
        "complete": "no",
        "sub_scores": [],
        "reason": "both devices wrote hello.txt",
        "level": "session",
        "request": "say hello on both devices",
        "type": "evaluation_result",
    }
    assert "Traceback" not in proc.stderr


def test_galaxy_interactive_takes_requests_until_quit(tmp_path: Path) -> None:
    proc = galaxy(
        "first request",
        "--interactive",
        "--local",
        "2",
        "--provider",
        "replay",
        "--replay-file",
        # Each request is one plan and its final answer: two independent tasks that both complete
        # need no review call (review mode "fast"), so the second request's plan comes next.
        str(write(tmp_path / "planner.jsonl", planner_answers(0) + planner_answers(0))),
        "--device-replay-file",
        str(write(tmp_path / "device.jsonl", DEVICE)),
        "--task-name",
        "chat",
        "--yes",
        cwd=tmp_path,
        stdin="say hello\nquit\n",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The request on the command line runs first, then the typed one; each has its own folder.
    assert proc.stdout.count("Request:") == 2, proc.stdout
    assert proc.stdout.count("COMPLETED") == 2, proc.stdout
    assert (tmp_path / "logs" / "galaxy" / "chat" / "output.md").is_file()
    assert (tmp_path / "logs" / "galaxy" / "chat_2" / "output.md").is_file()


def test_galaxy_usage_errors_are_clear(tmp_path: Path) -> None:
    proc = galaxy(cwd=tmp_path)
    assert proc.returncode == 2 and "give a request" in proc.stderr
    proc = galaxy("x", "--local", "1", "--devices", "d.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "either --devices FILE or --local N" in proc.stderr
    proc = galaxy("x", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "no devices: pass --devices" in proc.stderr
    (tmp_path / "d.yaml").write_text("devices:\n  - device_id: a\n")
    proc = galaxy("x", "--devices", "d.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "d.yaml" in proc.stderr and "server_url" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.model
def test_galaxy_local_2_on_the_embedded_model(tmp_path: Path) -> None:
    proc = galaxy(
        "On each of the two devices, create a file named hello.txt containing the word hello.",
        "--local",
        "2",
        "--task-name",
        "embedded",
        "--yes",
        cwd=tmp_path,
        timeout=1500,
    )
    folder = tmp_path / "logs" / "galaxy" / "embedded"
    assert (folder / "result.json").is_file(), proc.stdout + proc.stderr
    result = json.loads((folder / "result.json").read_text())
    assert result["constellation"] is not None and result["constellation"]["task_count"] >= 1, result
    assert (folder / "output.md").is_file()
    assert "Traceback" not in proc.stderr
    # The 1.5B model's plans vary, but the work itself reaches the devices.
    made = [
        p for p in (tmp_path / "galaxy_workspace").glob("local_linux_*/hello.txt") if "hello" in p.read_text()
    ]
    assert made, proc.stdout
