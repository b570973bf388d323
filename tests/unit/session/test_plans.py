"""Plan files of the batch and follower modes: strict checks, one-line errors naming the file,
the object's lookup (tasks→files), folders in name order, and the --mode/--plan combinations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starweave.session.plans import (
    PlanEntry,
    PlanError,
    RunMode,
    check_mode,
    follower_request,
    parse_plan,
    read_plans,
)


def plan_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_batch_plan_reads_task_object_and_close(tmp_path: Path) -> None:
    path = plan_file(tmp_path, "p.json", '{"task": "type it", "object": "draft.txt", "close": true}')
    plan = parse_plan(path, RunMode.BATCH)
    assert (plan.task, plan.object, plan.close, plan.steps) == ("type it", "draft.txt", True, None)
    assert parse_plan(plan_file(tmp_path, "q.json", '{"task": "t"}'), RunMode.BATCH).close is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"task": "x", "close": True}', "not Python's True"),
        ('{"task": "x",', "not valid JSON"),
        ('{"close": false}', "'task' is missing"),
        ('{"task": ""}', "'task' is empty"),
        ('{"task": "x", "close": "true"}', "'close' must be a JSON boolean"),
        ('{"task": "x", "close": 1}', "'close' must be a JSON boolean"),
        ('{"task": 3}', "'task'"),
        ('{"task": "x", "app": "word"}', "unknown key 'app'"),
        ('["task"]', "a plan is a JSON object"),
    ],
)
def test_bad_plans_give_one_line_errors_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = plan_file(tmp_path, "bad.json", text)
    with pytest.raises(PlanError) as caught:
        parse_plan(path, RunMode.BATCH)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


def test_a_follower_plan_needs_steps_and_an_object(tmp_path: Path) -> None:
    good = {"task": "heading", "steps": ["1. type 'Hi'", "2. save"], "object": "draft.txt"}
    plan = parse_plan(plan_file(tmp_path, "f.json", json.dumps(good)), RunMode.FOLLOWER)
    request = follower_request(plan)
    assert request.startswith("heading\n") and "1. type 'Hi'\n2. save" in request
    for broken, expected in (({**good, "steps": []}, "'steps'"), ({**good, "object": None}, "'object'")):
        with pytest.raises(PlanError, match=expected):
            parse_plan(plan_file(tmp_path, "g.json", json.dumps(broken)), RunMode.FOLLOWER)
    # A batch plan may carry steps (the reference's reader shares the keys); it ignores them.
    assert parse_plan(plan_file(tmp_path, "h.json", json.dumps(good)), RunMode.BATCH).task == "heading"


def test_the_object_of_a_plan_in_tasks_is_looked_up_in_files(tmp_path: Path) -> None:
    parent = tmp_path / "Parent"
    path = plan_file(parent / "tasks", "p.json", '{"task": "t", "object": "draft.txt"}')
    entry = PlanEntry(path, "p", parse_plan(path, RunMode.BATCH))
    assert entry.object_path() == parent / "files" / "draft.txt"
    with pytest.raises(PlanError, match=r"p\.json: object 'draft.txt': no file .*files/draft\.txt"):
        entry.object_file()
    plan_file(parent / "files", "draft.txt", "hello")
    assert entry.object_file() == parent / "files" / "draft.txt"


def test_elsewhere_the_object_is_next_to_the_plan(tmp_path: Path) -> None:
    path = plan_file(tmp_path / "plans", "p.json", '{"task": "t", "object": "draft.txt"}')
    entry = PlanEntry(path, "p", parse_plan(path, RunMode.BATCH))
    assert entry.object_path() == tmp_path / "plans" / "draft.txt"
    assert (
        PlanEntry(
            path, "p", parse_plan(plan_file(tmp_path, "n.json", '{"task": "t"}'), RunMode.BATCH)
        ).object_file()
        is None
    )


def test_a_folder_is_its_json_files_in_name_order_with_errors_kept_per_plan(tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    plan_file(folder, "b.json", '{"task": "second"}')
    plan_file(folder, "a.json", '{"task": "first"}')
    plan_file(folder, "c.json", "{oops")
    plan_file(folder, "notes.txt", "not a plan")
    entries = read_plans(folder, RunMode.BATCH)
    assert [e.name for e in entries] == ["a", "b", "c"]
    assert [e.plan.task if e.plan else None for e in entries] == ["first", "second", None]
    assert "c.json: not valid JSON" in entries[2].error


def test_plan_paths_that_cannot_be_used(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="no such file or folder"):
        read_plans(tmp_path / "missing.json", RunMode.BATCH)
    (tmp_path / "empty").mkdir()
    with pytest.raises(PlanError, match="no plan files"):
        read_plans(tmp_path / "empty", RunMode.BATCH)
    # One file: its problem is the run's error, not a row.
    with pytest.raises(PlanError, match="'task' is missing"):
        read_plans(plan_file(tmp_path, "one.json", "{}"), RunMode.BATCH)


@pytest.mark.parametrize(
    ("mode", "plan", "ask", "agent", "expected"),
    [
        ("normal", Path("p.json"), None, "linux", "--plan runs with --mode batch_normal"),
        ("batch_normal", None, None, "linux", "needs --plan"),
        ("follower", None, None, "host", "needs --plan"),
        ("batch_normal", Path("p.json"), "do it", "linux", "leave out the request"),
        ("follower", Path("p.json"), None, "linux", "use it with --agent host"),
        ("normal", None, None, "linux", "missing the request"),
        ("sideways", None, "x", "linux", "unknown --mode 'sideways'"),
    ],
)
def test_mode_and_plan_must_go_together(
    mode: str, plan: Path | None, ask: str | None, agent: str, expected: str
) -> None:
    with pytest.raises(PlanError, match=expected):
        check_mode(mode, plan, ask, agent)


def test_valid_mode_combinations() -> None:
    assert check_mode("normal", None, "do it", "linux") is RunMode.NORMAL
    assert check_mode("batch_normal", Path("p"), None, "host") is RunMode.BATCH
    assert check_mode("follower", Path("p"), "", "host") is RunMode.FOLLOWER


def test_the_object_is_copied_into_the_workspace_never_over_a_different_file(tmp_path: Path) -> None:
    from starweave.errors import ConfigError
    from starweave.session.plan_objects import object_guard, place_in_workspace

    source = plan_file(tmp_path / "files", "draft.txt", "v1")
    workspace = tmp_path / "ws"
    guard = object_guard(workspace, (), source.parent)
    placed = place_in_workspace(source, workspace, guard)
    assert placed == workspace / "draft.txt" and placed.read_text() == "v1"
    assert place_in_workspace(source, workspace, guard) == placed  # an equal copy is kept
    placed.write_text("changed by the user")
    with pytest.raises(ConfigError, match="differs from the file of that name"):
        place_in_workspace(source, workspace, guard)
    assert placed.read_text() == "changed by the user"
