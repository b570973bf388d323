"""The Galaxy benchmark suite (benchmarks/embedded_tasks_galaxy.py): its checks pass on a right
outcome and fail on a wrong one, and a request runs through the real CLI with its paths as the
suite expects (recorded answers instead of the model)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from embedded_tasks_galaxy import LOG_DIR, TASKS, run_galaxy_suite, workspace

BY_NAME = {task.name: task for task in TASKS}

Files = dict[tuple[int, str], str]
# Per task: the files a right run leaves, and its task results ("|" between them; the last one is
# also the run's final answer).
GOOD: dict[str, tuple[Files, str]] = {
    "hello_each": ({(1, "hello.txt"): "hello\n", (2, "hello.txt"): "hello\n"}, "done"),
    "mkdir_each": ({(1, "reports/.keep"): "", (2, "reports/.keep"): ""}, "done"),
    "append_each": ({(1, "log.txt"): "start\nend\n", (2, "log.txt"): "start\nend\n"}, "done"),
    "lines_each": ({}, "notes.txt has 4 lines | notes.txt has 6 lines"),
    "count_total": ({}, "3 | 5 | The total is 8."),
    "words_total": ({}, "3 | 2 | 5 words in total"),
    "sum_numbers": ({}, "12 | 30 | The sum is 42"),
    "copy_word": ({(2, "found.txt"): "banana\n"}, "banana"),
    "double_number": ({(2, "double.txt"): "42\n"}, "21 | wrote 42"),
    "word_relay": ({(1, "made.txt"): "apple\n", (2, "seen.txt"): "apple\n"}, "apple"),
    "fruit_pair": ({(1, "apple.txt"): "apple\n", (2, "banana.txt"): "banana\n"}, "done"),
    "list_and_mark": ({(2, "done.txt"): "ok\n"}, "x1.log x2.log | done"),
}
# What a poor run leaves: each must fail its task's check.
POOR: dict[str, tuple[Files, str]] = {
    "hello_each": ({(1, "hello.txt"): "hello\n"}, "done"),  # only one device did it
    "mkdir_each": ({(1, "reports/.keep"): ""}, "done"),
    "append_each": ({(1, "log.txt"): "start\nend\n"}, "done"),
    "lines_each": ({}, "notes.txt has 4 lines | 7"),
    "count_total": ({}, "3 | 5 | The total is 9."),
    "words_total": ({}, "3 | 2 | 6 words"),
    "sum_numbers": ({}, "12 | 42 | The sum is 84."),  # a task said 42, the total is wrong
    "copy_word": ({(2, "found.txt"): "secret.txt\n"}, "banana"),
    "double_number": ({(2, "double.txt"): "21\n"}, "21"),
    "word_relay": ({(1, "made.txt"): "apple\n"}, "apple"),
    "fruit_pair": ({(1, "apple.txt"): "apple\n", (2, "banana.txt"): "\n"}, "done"),
    "list_and_mark": ({(2, "done.txt"): "ok\n"}, "no log files"),
}


def outcome(workdir: Path, files: Files, answer: str, status: str = "completed") -> dict[str, Any]:
    """Leave ``files`` in the workspaces and return a result.json with ``answer`` as task results."""
    for (device, name), text in files.items():
        path = workspace(workdir, device) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    tasks = {
        f"t{i}": {"status": "completed", "result": part.strip(), "error": None}
        for i, part in enumerate(answer.split("|"), 1)
    }
    final = {"request": "r", "result": tasks, "answer": answer.split("|")[-1].strip()}
    return {"status": status, "session_results": {"final_results": [final]}}


def test_every_task_has_a_right_and_a_wrong_outcome() -> None:
    assert len(TASKS) >= 10
    assert set(GOOD) == set(POOR) == set(BY_NAME)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_check_passes_on_a_right_outcome(name: str, tmp_path: Path) -> None:
    task = BY_NAME[name]
    task.setup(tmp_path)
    assert task.check(tmp_path, outcome(tmp_path, *GOOD[name])) is None


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_check_fails_on_a_wrong_outcome(name: str, tmp_path: Path) -> None:
    task = BY_NAME[name]
    task.setup(tmp_path)
    assert task.check(tmp_path, outcome(tmp_path, *POOR[name]))


def test_a_failed_run_fails_the_check_even_with_the_right_files(tmp_path: Path) -> None:
    task = BY_NAME["hello_each"]
    reason = task.check(tmp_path, outcome(tmp_path, *GOOD["hello_each"], status="failed"))
    assert reason and "the run ended failed" in reason
    assert task.check(tmp_path, {}) == "no result.json was written"


def write(path: Path, answers: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    return path


def test_a_request_runs_through_the_cli_where_the_suite_looks(tmp_path: Path) -> None:
    hello = "Create a file named hello.txt containing the word hello."
    plan = {
        "thought": "The same job on each device.",
        "status": "CONTINUE",
        "constellation": {
            "tasks": [
                {"task_id": "t1", "target_device_id": "local_linux_1", "description": hello},
                {"task_id": "t2", "target_device_id": "local_linux_2", "description": hello},
            ],
            "dependencies": [],
        },
    }
    step = {
        "function": "execute_command",
        "arguments": {"command": "echo hello > hello.txt"},
        "status": "CONTINUE",
    }
    # The plan ends in two tasks, so one answer-only call puts their results together.
    answer = {"thought": "Both wrote it.", "status": "FINISH", "action": [], "results": "hello.txt on both"}
    done = {"function": "", "arguments": {}, "status": "FINISH"}
    device = [
        {"observation": "o", "thought": "t", "action": step, "result": ""},
        {"observation": "o", "thought": "t", "action": done, "result": "hello.txt holds hello"},
    ]
    extra = [
        "--provider",
        "replay",
        "--replay-file",
        str(write(tmp_path / "planner.jsonl", [plan, answer])),
        "--device-replay-file",
        str(write(tmp_path / "device.jsonl", device)),
    ]
    keep = tmp_path / "kept"
    [result] = run_galaxy_suite(timeout=120, names=["hello_each"], keep=keep, extra_args=extra)
    assert result.ok, (result.reason, result.extra)
    assert result.steps == 2  # the plan, and the final answer
    assert "hello.txt on both" in result.extra["answer"] and "hello.txt holds hello" in result.extra["answer"]
    assert (keep / "hello_each" / LOG_DIR / "hello_each" / "result.json").is_file()
