"""Everyday chores on recorded answers: what a good model answers, run by the real agent and shell.

The tasks (request, files placed first, check of the real outcome) are the embedded-model benchmark's
(benchmarks/embedded_tasks_linux.py), so these tests also prove that its checks pass on a right
outcome and fail on a wrong one. Each run uses the real LinuxAgent, MCP servers and sandboxed shell
in a temp workspace; only the model is replaced by the recorded answers.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.linux_replay import answer, replay_file, responses, run, tool_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from embedded_tasks_linux import TASKS, run_linux_suite

BY_NAME = {task.name: task for task in TASKS}

# What a good model answers for each task, one answer per step; a change it made is looked at before
# it finishes (the ``checked`` guard).
GOOD: dict[str, list[dict[str, Any]]] = {
    "demo": [answer("mkdir -p demo && echo hello > demo/a.txt", "FINISH", "Wrote hello into demo/a.txt.")],
    "count_lines": [answer("wc -l data/names.txt"), answer(None, "FINISH", "data/names.txt has 37 lines.")],
    "count_files": [answer("ls reports/*.csv | wc -l"), answer(None, "FINISH", "There are 7 .csv files.")],
    "grep_count": [answer("grep -c ERROR app.log"), answer(None, "FINISH", "5 lines contain ERROR.")],
    "word_count": [answer("wc -w poem.txt"), answer(None, "FINISH", "poem.txt has 10 words.")],
    "largest_file": [answer("ls -S data | head -n 1"), answer(None, "FINISH", "huge.bin is the largest.")],
    "csv_total": [
        answer("awk -F, 'NR>1 {s+=$2} END {print s}' sales.csv"),
        answer(None, "FINISH", "The amounts add up to 62."),
    ],
    "replace_text": [
        answer("sed -i 's/localhost/127.0.0.1/g' config.ini && cat config.ini", "FINISH", "Replaced.")
    ],
    "sort_lines": [
        answer(
            "sort words.txt > sorted.txt && cat sorted.txt", "FINISH", "Saved the sorted lines in sorted.txt."
        )
    ],
    "unique_lines": [
        answer("sort -u colors.txt > unique.txt && cat unique.txt", "FINISH", "Wrote unique.txt.")
    ],
    "append_line": [answer("echo banana >> fruits.txt && cat fruits.txt", "FINISH", "Added banana.")],
    "backup_copy": [answer("cp notes.txt notes.bak", "FINISH", "Copied notes.txt to notes.bak.")],
    "archive_folder": [answer("tar czf docs.tar.gz docs", "FINISH", "Created docs.tar.gz.")],
    "rename_ext": [
        answer("ls photos"),
        answer(
            "mv photos/a.jpeg photos/a.jpg && mv photos/b.jpeg photos/b.jpg && mv photos/c.jpeg photos/c.jpg",
            "FINISH",
            "Renamed a.jpeg, b.jpeg and c.jpeg to .jpg.",
        ),
    ],
    "prefix_names": [
        tool_answer(
            "write_file",
            {
                "path": "prefix.py",
                "content": "import os\nfor f in os.listdir('data'):\n    if f.endswith('.csv'):\n"
                "        os.rename('data/' + f, 'data/2025_' + f)\n",
            },
        ),
        answer("python3 prefix.py", "FINISH", "Renamed the .csv files of data."),
    ],
    "first_line": [answer("head -n 1 todo.txt"), answer(None, "FINISH", "It says: water the plants")],
    "newest_file": [answer("ls -t inbox | head -n 1"), answer(None, "FINISH", "reply.txt is the newest.")],
    "delete_tmp": [answer("rm cache/*.tmp", "FINISH", "Deleted the .tmp files in cache.")],
    "move_png": [answer("mkdir -p images && mv inbox/*.png images/", "FINISH", "Moved the .png files.")],
    "python_script": [
        tool_answer("write_file", {"path": "sum.py", "content": "print(sum(range(1, 101)))\n"}),
        answer("python3 sum.py", "FINISH", "sum.py prints 5050."),
    ],
}

# What a poor model answers: each must fail the task's check (the checks can fail).
POOR: dict[str, list[dict[str, Any]]] = {
    # shown the empty file (the checked guard), it insists
    "demo": [
        answer("mkdir demo && touch demo/a.txt", "FINISH", "Created demo/a.txt."),
        answer(None, "FINISH", "Created demo/a.txt."),
    ],
    "count_lines": [answer(None, "FINISH", "It has 36 lines."), answer(None, "FINISH", "It has 36 lines.")],
    "largest_file": [
        answer("ls -S data"),
        answer(None, "FINISH", "See the listing: huge.bin medium.bin small.bin"),
    ],
    "sort_lines": [answer("sort words.txt > words.txt", "FINISH", "Sorted.")],
    "rename_ext": [answer("mv photos/a.jpeg photos/a.jpg", "FINISH", "Renamed.")],
    "python_script": [answer(None, "FINISH", "It prints 5050."), answer(None, "FINISH", "It prints 5050.")],
    "newest_file": [answer("ls inbox | head -n 1"), answer(None, "FINISH", "agenda.txt")],
    "prefix_names": [answer("mv data/jan.csv data/2025_jan.csv", "FINISH", "Renamed.")],
    # the files are right, but the user is told the run failed
    "delete_tmp": [answer("rm cache/*.tmp"), answer(None, "FAIL", "Could not delete them.")],
}


def test_every_benchmark_task_has_good_answers() -> None:
    assert len(TASKS) >= 12
    assert set(GOOD) == set(BY_NAME)


async def solve(tmp_path: Path, name: str, answers: list[dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    task = BY_NAME[name]
    workspace = tmp_path / "work"
    workspace.mkdir()
    task.setup(workspace)
    result = await run(tmp_path, answers, request=task.request, workspace=workspace, auto_approve=True)
    return workspace, result


@pytest.mark.parametrize("name", sorted(GOOD))
async def test_a_good_model_does_the_chore(tmp_path: Path, name: str) -> None:
    workspace, result = await solve(tmp_path, name, GOOD[name])
    assert BY_NAME[name].check(workspace, result) is None
    # in as many steps as the good answers, none refused or repeated
    assert result["status"] == "FINISH"
    assert result["steps"] == len(GOOD[name]), [r.get("note") for r in responses(tmp_path)]


@pytest.mark.parametrize("name", sorted(POOR))
async def test_a_poor_outcome_fails_the_check(tmp_path: Path, name: str) -> None:
    workspace, result = await solve(tmp_path, name, POOR[name])
    assert BY_NAME[name].check(workspace, result)


def test_the_benchmark_runs_a_task_through_the_cli_and_reads_its_result_json(tmp_path: Path) -> None:
    outcomes = []
    for name in ("demo", "count_lines"):
        answers = replay_file(tmp_path, GOOD[name])
        extra = ["--provider", "replay", "--replay-file", str(answers)]
        outcomes += run_linux_suite(timeout=120, names=[name], extra_args=extra, keep=tmp_path / "kept")
    assert [(o.name, o.ok, o.reason, o.steps) for o in outcomes] == [
        ("demo", True, "", 1),
        ("count_lines", True, "", 2),
    ]
    assert outcomes[1].extra["result"] == "data/names.txt has 37 lines."
    assert (tmp_path / "kept" / "demo" / "demo" / "a.txt").read_text() == "hello\n"
