"""Batch mode with the LinuxAgent on recorded answers: three plans, one failing, one summary.

Each plan runs as its own task (real shell MCP server, real workspace, real log folders); the replay
provider answers from ``<replay folder>/<plan name>.jsonl``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers.linux_replay import AnsweringView, answer
from integration.test_ask_user import config_dir
from rich.console import Console

from starweave.knowledge import KnowledgeBase
from starweave.session.batch import BatchRequest, run_batch
from starweave.session.console import ConsoleView
from starweave.session.plans import RunMode
from starweave.session.runner import RunOptions


def write_plan(folder: Path, name: str, plan: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def write_replay(folder: Path, name: str, answers: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join(json.dumps(a) for a in answers) + "\n"
    (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")


def replay_options(tmp_path: Path, **extra: Any) -> RunOptions:
    """A batch "nightly" in ``tmp_path``: workspace ``ws``, answers from ``replay/``, logs in ``logs``."""
    return RunOptions(
        request="",
        workspace=tmp_path / "ws",
        task="nightly",
        provider="replay",
        replay_file=tmp_path / "replay",
        log_dir=tmp_path / "logs",
        **extra,
    )


async def run_plans(tmp_path: Path, plan: Path, evaluate: bool = False) -> tuple[dict[str, Any], str]:
    replay = {"provider": "replay", "replay_file": tmp_path / "replay", "log_dir": tmp_path / "logs"}
    options = RunOptions(request="", workspace=tmp_path / "ws", task="nightly", evaluate=evaluate, **replay)
    with (tmp_path / "console.txt").open("w") as out:
        view = ConsoleView(console=Console(file=out, width=140))
        summary = await run_batch(options, view, BatchRequest(RunMode.BATCH, plan))
    return summary, (tmp_path / "console.txt").read_text(encoding="utf-8")


async def test_three_plans_one_failing_give_a_summary_table_and_json(tmp_path: Path) -> None:
    parent = tmp_path / "Parent"
    tasks = parent / "tasks"
    (parent / "files").mkdir(parents=True)
    (parent / "files" / "draft.txt").write_text("first line\n", encoding="utf-8")
    write_plan(tasks, "a_append", {"task": "append 'second line' to the draft", "object": "draft.txt"})
    write_plan(tasks, "b_impossible", {"task": "print the moon's phase", "close": False})
    write_plan(tasks, "c_hello", {"task": "write hello.txt"})
    replay = tmp_path / "replay"
    write_replay(
        replay,
        "a_append",
        [
            answer("echo 'second line' >> draft.txt && cat draft.txt"),
            answer(None, "FINISH", result="appended"),
        ],
    )
    write_replay(replay, "b_impossible", [answer(None, "FAIL", result="no telescope here")])
    write_replay(
        replay, "c_hello", [answer("echo hello > hello.txt"), answer(None, "FINISH", result="hello.txt")]
    )

    summary, console = await run_plans(tmp_path, tasks)

    workspace = tmp_path / "ws"
    # The object came from Parent/files (tasks→files) into the workspace, and the agent changed it.
    assert (workspace / "draft.txt").read_text(encoding="utf-8") == "first line\nsecond line\n"
    assert (parent / "files" / "draft.txt").read_text(encoding="utf-8") == "first line\n"
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"
    rows = {row["task"]: row for row in summary["plans"]}
    assert [row["task"] for row in summary["plans"]] == ["a_append", "b_impossible", "c_hello"]
    assert {t: r["status"] for t, r in rows.items()} == {
        "a_append": "FINISH",
        "b_impossible": "FAIL",
        "c_hello": "FINISH",
    }
    assert rows["a_append"]["steps"] == 2 and rows["b_impossible"]["steps"] == 1
    assert all(row["time"] > 0 and row["cost"] == 0.0 for row in rows.values())
    assert all(row["evaluation"] == "-" for row in rows.values())
    assert summary["status"] == "FAIL" and summary["finished"] == 2 and summary["total"] == 3
    # One log folder per task, each with its result; the summary JSON next to them says the same.
    batch = tmp_path / "logs" / "nightly"
    for name, row in rows.items():
        result = json.loads((batch / name / "result.json").read_text(encoding="utf-8"))
        assert result["status"] == row["status"] and result["steps"] == row["steps"]
        assert row["log_path"] == str(batch / name)
        assert result["request"].startswith(row["request"])
    # The object is named in the request the agent got.
    assert "draft.txt" in json.loads((batch / "a_append" / "result.json").read_text())["request"]
    saved = json.loads((batch / "summary.json").read_text(encoding="utf-8"))
    assert saved["plans"] == summary["plans"] and saved["status"] == "FAIL"
    # The table: a header with the columns and one line per plan.
    assert "2/3 finished" in console
    for column in ("task", "status", "steps", "time", "cost", "evaluation"):
        assert column in console
    failing = next(line for line in console.splitlines() if "b_impossible" in line and "FAIL" in line)
    assert "$0.0000" in failing


async def test_a_bad_plan_or_a_missing_object_fails_that_plan_only(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    write_plan(plans, "1_missing_object", {"task": "edit it", "object": "nowhere.txt"})
    (plans / "2_python_bool.json").write_text('{"task": "x", "close": True}', encoding="utf-8")
    write_plan(plans, "3_ok", {"task": "say done"})
    write_replay(tmp_path / "replay", "3_ok", [answer(None, "FINISH", result="done")])

    summary, console = await run_plans(tmp_path, plans)

    rows = {row["task"]: row for row in summary["plans"]}
    assert rows["1_missing_object"]["status"] == "ERROR"
    assert "nowhere.txt" in rows["1_missing_object"]["error"]
    assert rows["2_python_bool"]["status"] == "ERROR"
    assert "not Python's True" in rows["2_python_bool"]["error"]
    assert rows["3_ok"]["status"] == "FINISH"
    assert summary["finished"] == 1 and summary["status"] == "FAIL"
    assert "1/3 finished" in console


async def test_evaluation_verdicts_go_into_the_summary(tmp_path: Path) -> None:
    plan = write_plan(tmp_path / "plans", "judged", {"task": "say done"})
    verdict = {
        "reason": "the agent said done",
        "sub_scores": [{"name": "said done", "evaluation": "yes"}],
        "complete": "yes",
    }
    write_replay(tmp_path / "replay", "judged", [answer(None, "FINISH", result="done"), verdict])

    summary, console = await run_plans(tmp_path, plan, evaluate=True)
    assert "evaluation" in console

    (row,) = summary["plans"]
    assert row["status"] == "FINISH" and row["evaluation"] == "yes"
    assert (tmp_path / "logs" / "nightly" / "judged" / "evaluation.log").is_file()
    assert summary["status"] == "FINISH"


async def test_a_plan_runs_one_round_without_terminal_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "kb"))
    plans = tmp_path / "plans"
    write_plan(plans, "asked", {"task": "say done"})
    write_plan(plans, "forced", {"task": "say done too"})
    for name in ("asked", "forced"):
        write_replay(tmp_path / "replay", name, [answer(None, "FINISH", result="done")])
    # A terminal that would answer, MAX_ROUND 2 and SAVE_EXPERIENCE ask: a plan still asks nothing.
    config = config_dir(tmp_path, MAX_ROUND=2, RAG_EXPERIENCE=True, SAVE_EXPERIENCE="ask")
    base = replay_options(tmp_path, config_dir=config)
    with (tmp_path / "console.txt").open("w") as out:
        view = AnsweringView(Console(file=out, width=140), answer=False, typed=["another request"])
        summary = await run_batch(base, view, BatchRequest(RunMode.BATCH, plans / "asked.json"))
        # An explicit --save-experience still saves the plan's run.
        forced = replace(base, task="forced_batch", save_experience=True)
        await run_batch(forced, view, BatchRequest(RunMode.BATCH, plans / "forced.json"))
    console = (tmp_path / "console.txt").read_text(encoding="utf-8")
    assert summary["status"] == "FINISH" and view.typed == ["another request"]
    assert "Next request" not in console
    assert "Experience not saved: a batch runs unattended" in console
    (document,) = KnowledgeBase(tmp_path / "kb").store("experience").documents()
    assert f"Experience saved: {document.id}" in console


@pytest.mark.parametrize("auto_approve", [False, True])
async def test_a_plans_dangerous_command_is_refused_without_asking_unless_yes(
    tmp_path: Path, auto_approve: bool
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "victim.txt").write_text("keep me\n")
    plans = tmp_path / "plans"
    write_plan(plans, "remove", {"task": "remove victim.txt"})
    write_replay(
        tmp_path / "replay", "remove", [answer("rm victim.txt"), answer(None, "FINISH", result="gone")]
    )
    options = replay_options(tmp_path, auto_approve=auto_approve)
    with (tmp_path / "console.txt").open("w") as out:
        # A user at the terminal who would say yes: a plan asks nobody.
        view = AnsweringView(Console(file=out, width=200), answer=True, typed=["y"])
        summary = await run_batch(options, view, BatchRequest(RunMode.BATCH, plans / "remove.json"))
    console = (tmp_path / "console.txt").read_text(encoding="utf-8")
    assert view.asked == [] and view.typed == ["y"]
    if auto_approve:
        assert summary["status"] == "FINISH" and not (tmp_path / "ws" / "victim.txt").exists()
        return
    assert summary["plans"][0]["status"] == "FAIL"
    assert (tmp_path / "ws" / "victim.txt").read_text() == "keep me\n"
    assert (
        "Not asked (a batch runs unattended): refused rm victim.txt - allow such actions with --yes"
        in console
    )
