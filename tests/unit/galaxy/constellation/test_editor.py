"""ConstellationEditor: commands, undo/redo, bulk build, files, subgraph, merge, observers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starweave.errors import CycleError, DuplicateIdError, ModificationError, TaskNotFoundError
from starweave.galaxy.constellation import (
    ConstellationEditor,
    TaskPriority,
    TaskStar,
    TaskStarLine,
    TaskStatus,
)


def chain_editor() -> ConstellationEditor:
    editor = ConstellationEditor()
    editor.create_and_add_task("fetch_data", "Fetch the data")
    editor.create_and_add_task("preprocess", "Clean it", priority="HIGH")
    editor.create_and_add_dependency("fetch_data", "preprocess", "SUCCESS_ONLY", line_id="l1")
    return editor


def test_history_descriptions_and_undo_redo() -> None:
    editor = chain_editor()
    editor.update_task("preprocess", description="Clean it well")
    assert editor.get_history() == [
        "Add task: fetch_data",
        "Add task: preprocess",
        "Add dependency: fetch_data → preprocess",
        "Update task: preprocess",
    ]
    assert editor.get_task("preprocess").priority is TaskPriority.HIGH  # type: ignore[union-attr]
    assert editor.get_undo_description() == "Update task: preprocess"
    assert editor.undo()
    assert editor.get_task("preprocess").description == "Clean it"  # type: ignore[union-attr]
    assert editor.get_redo_description() == "Update task: preprocess"
    assert editor.redo()
    assert editor.get_task("preprocess").description == "Clean it well"  # type: ignore[union-attr]
    assert not editor.redo()


def test_invalid_operations_record_nothing() -> None:
    editor = chain_editor()
    before = editor.constellation.to_json()
    with pytest.raises(DuplicateIdError):
        editor.create_and_add_task("fetch_data", "again")
    with pytest.raises(CycleError, match="would create a cycle"):
        editor.create_and_add_dependency("preprocess", "fetch_data")
    with pytest.raises(TaskNotFoundError):
        editor.remove_task("nope")
    with pytest.raises(TaskNotFoundError):
        editor.create_and_add_dependency("fetch_data", "nope")
    assert len(editor.get_history()) == 3
    assert editor.constellation.to_json() == before


def test_running_task_is_not_modifiable() -> None:
    editor = chain_editor()
    editor.constellation.start_task("fetch_data")
    with pytest.raises(ModificationError):
        editor.update_task("fetch_data", name="x")
    with pytest.raises(ModificationError):
        editor.remove_task("fetch_data")
    assert editor.get_task("fetch_data").status is TaskStatus.RUNNING  # type: ignore[union-attr]


def test_new_command_clears_redo_and_history_is_bounded() -> None:
    editor = ConstellationEditor(max_history_size=3)
    for i in range(5):
        editor.create_and_add_task(f"t{i}", "d")
    assert editor.get_history() == ["Add task: t2", "Add task: t3", "Add task: t4"]
    assert editor.undo()
    assert editor.can_redo()
    editor.create_and_add_task("x", "d")
    assert not editor.can_redo()
    editor.clear_history()
    assert not editor.can_undo()
    assert not editor.undo()


def test_remove_task_cascades_and_undo_restores_exactly() -> None:
    editor = chain_editor()
    before = editor.constellation.to_json()
    assert editor.remove_task("fetch_data") == "fetch_data"
    assert editor.list_dependencies() == []
    assert editor.get_task("preprocess").status is TaskStatus.PENDING  # type: ignore[union-attr]
    editor.undo()
    assert editor.constellation.to_json() == before
    assert editor.get_task("preprocess").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
    # the restored objects are owned by the live constellation: further edits still work
    editor.remove_dependency("l1")
    assert editor.get_task("preprocess").status is TaskStatus.PENDING  # type: ignore[union-attr]


def test_update_and_remove_dependency() -> None:
    editor = chain_editor()
    line = editor.update_dependency("l1", condition_description="when ok")
    assert line.condition_description == "when ok"
    assert editor.get_history()[-1] == "Update dependency: l1"
    assert editor.remove_dependency("l1") == "l1"
    editor.undo()
    editor.undo()
    assert editor.get_dependency("l1").condition_description is None  # type: ignore[union-attr]


def test_build_clear_and_failed_build_rolls_back() -> None:
    editor = chain_editor()
    config = {
        "tasks": [{"task_id": "a", "description": "A"}, {"task_id": "b", "description": "B", "priority": 4}],
        "dependencies": [{"from_task_id": "a", "to_task_id": "b", "dependency_type": "success_only"}],
    }
    built = editor.build_constellation(config)
    assert built is editor.constellation
    assert [t.task_id for t in editor.list_tasks()] == ["a", "b"]
    assert editor.get_task("b").priority is TaskPriority.CRITICAL  # type: ignore[union-attr]
    snapshot = editor.constellation.to_json()
    bad = {
        "tasks": [{"task_id": "c", "description": "C"}],
        "dependencies": [{"from_task_id": "c", "to_task_id": "missing"}],
    }
    with pytest.raises(TaskNotFoundError):
        editor.build_constellation(bad, clear_existing=False)
    assert editor.constellation.to_json() == snapshot
    editor.clear_constellation()
    assert editor.list_tasks() == []
    editor.undo()
    assert editor.constellation.to_json() == snapshot
    editor.undo()
    assert [t.task_id for t in editor.list_tasks()] == ["fetch_data", "preprocess"]


def test_save_load_roundtrip(tmp_path: Path) -> None:
    editor = chain_editor()
    path = editor.save_constellation(tmp_path / "c.json")
    text = editor.constellation.to_json()
    other = ConstellationEditor()
    other.load_constellation(path)
    assert other.constellation.to_json() == text
    assert other.get_history() == [f"Load constellation: {editor.constellation.name}"]
    third = ConstellationEditor()
    third.load_from_json_string(text)
    assert third.constellation.to_json() == text


def test_subgraph_and_merge() -> None:
    editor = chain_editor()
    editor.create_and_add_task("report", "Write it")
    editor.create_and_add_dependency("preprocess", "report", line_id="l2")
    sub = editor.create_subgraph(["preprocess", "report"])
    assert [t.task_id for t in sub.list_tasks()] == ["preprocess", "report"]
    assert [d.line_id for d in sub.list_dependencies()] == ["l2"]
    with pytest.raises(TaskNotFoundError):
        editor.create_subgraph(["ghost"])
    with pytest.raises(DuplicateIdError, match="prefix"):
        editor.merge_constellation(sub)
    before = editor.constellation.to_json()
    editor.merge_constellation(sub, prefix="p_")
    assert editor.get_task("p_report") is not None
    merged_line = editor.get_dependency("p_l2")
    assert merged_line is not None and merged_line.from_task_id == "p_preprocess"
    assert editor.get_task("p_report").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
    editor.undo()
    assert editor.constellation.to_json() == before


def test_observers_called_and_errors_swallowed(caplog: pytest.LogCaptureFixture) -> None:
    editor = ConstellationEditor()
    seen: list[tuple[str, Any]] = []

    def broken(_e: ConstellationEditor, _name: str, _result: Any) -> None:
        raise RuntimeError("observer bug")

    def record(e: ConstellationEditor, name: str, result: Any) -> None:
        assert e is editor
        seen.append((name, result))

    editor.add_observer(broken)
    editor.add_observer(record)
    task = editor.create_and_add_task("a", "A")
    editor.undo()
    assert seen == [("add_task", task), ("undo", "Add task: a")]
    assert "observer bug" in caplog.text
    editor.remove_observer(record)
    editor.create_and_add_task("b", "B")
    assert len(seen) == 2


def test_batch_and_statistics() -> None:
    editor = ConstellationEditor()
    results = editor.batch_operations(
        [
            lambda e: e.create_and_add_task("a", "A"),
            lambda e: e.create_and_add_task("a", "A"),
            lambda e: e.create_and_add_task("b", "B"),
        ]
    )
    assert isinstance(results[1], DuplicateIdError)
    stats = editor.get_statistics()
    assert stats["total_tasks"] == 2
    assert stats["editor_execution_count"] == 2
    assert stats["editor_can_undo"] and not stats["editor_can_redo"]
    assert editor.validate_constellation() == (True, [])
    assert not editor.has_cycles()


def test_history_disabled_records_nothing() -> None:
    editor = ConstellationEditor(enable_history=False)
    editor.create_and_add_task("a", "A")
    assert not editor.can_undo() and editor.get_history() == []


# --------------------------------------------------------------------------- property test
OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "dep", "update", "remove_task", "remove_dep", "update_dep"]),
        st.integers(0, 5),
        st.integers(0, 5),
    ),
    max_size=25,
)


def apply(editor: ConstellationEditor, op: str, a: int, b: int) -> None:
    c = editor.constellation
    if op == "add":
        editor.create_and_add_task(f"t{a}", f"task {a}")
    elif op == "dep":
        editor.create_and_add_dependency(f"t{a}", f"t{b}", "SUCCESS_ONLY" if b % 2 else "UNCONDITIONAL")
    elif op == "update":
        editor.update_task(f"t{a}", description=f"changed {b}", priority=1 + b % 4)
    elif op == "remove_task":
        editor.remove_task(f"t{a}")
    else:
        lines = c.get_all_dependencies()
        if not lines:
            raise KeyError("no line")
        line = lines[b % len(lines)]
        if op == "remove_dep":
            editor.remove_dependency(line.line_id)
        else:
            editor.update_dependency(line.line_id, condition_description=f"cond {a}")


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_undo_all_restores_start_and_redo_all_restores_end(ops: list[tuple[str, int, int]]) -> None:
    editor = ConstellationEditor(max_history_size=1000)
    editor.create_and_add_task("t0", "seed")
    editor.clear_history()
    start = editor.constellation.to_json()
    for op, a, b in ops:
        before, history = editor.constellation.to_json(), editor.get_history()
        try:
            apply(editor, op, a, b)
        except (ValueError, KeyError):
            # a refused edit leaves no trace at all
            assert editor.constellation.to_json() == before
            assert editor.get_history() == history
    end = editor.constellation.to_json()
    assert not editor.has_cycles()
    steps = 0
    while editor.undo():
        steps += 1
    assert editor.constellation.to_json() == start
    while editor.redo():
        steps -= 1
    assert steps == 0
    assert editor.constellation.to_json() == end


def test_refused_edit_keeps_objects_and_undo_detaches_replaced_ones() -> None:
    import threading

    ed = ConstellationEditor()
    c = ed.constellation
    ed.create_and_add_task("a", "d")
    ed.create_and_add_task("b", "d")
    running = c.start_task("a")  # a reference an orchestrator would hold
    with pytest.raises(ValueError):
        ed.update_task("b", bogus=1)
    running.complete_with_success(threading.Lock())  # an uncopyable result
    assert c.get_task("a") is running and c.get_task("a").status.value == "completed"  # type: ignore[union-attr]
    assert c.is_complete() is False and [t.task_id for t in c.get_ready_tasks()] == ["b"]
    ed.create_and_add_task("z", "d")  # editing still works: results are referenced, not copied
    assert ed.undo()
    assert c.get_task("a").result is running.result  # type: ignore[union-attr]
    stale = c.get_task("b")
    assert stale is not None
    ed.clear_constellation()
    stale.cancel()  # detached: changes only itself, never the cleared constellation
    assert c.task_count == 0 and c.status_counts()[stale.status] == 0


def test_failed_build_leaves_callers_objects_reusable() -> None:
    ed = ConstellationEditor()
    stars = [TaskStar(task_id="a", description="d"), TaskStar(task_id="b", description="d")]
    with pytest.raises(ValueError, match="Target task zz not found"):
        ed.build_from_tasks_and_dependencies(stars, [TaskStarLine("a", "zz")])
    assert ed.list_tasks() == []
    built = ed.build_from_tasks_and_dependencies(stars, [TaskStarLine("a", "b", line_id="l")])
    assert [t.task_id for t in built.get_ready_tasks()] == ["a"]


def test_build_reproduces_an_executing_constellation() -> None:
    source = ConstellationEditor()
    source.create_and_add_task("a", "d")
    source.create_and_add_task("b", "d")
    source.create_and_add_task("c", "d")
    source.create_and_add_dependency("a", "b", "SUCCESS_ONLY")
    source.create_and_add_dependency("b", "c", "UNCONDITIONAL")
    c = source.constellation
    c.mark_task_completed("a", True, "rows")
    c.start_task("b")
    target = ConstellationEditor()
    rebuilt = target.build_constellation(c.to_dict())
    assert {t.task_id: t.status.value for t in rebuilt.get_all_tasks()} == {
        "a": "completed",
        "b": "running",
        "c": "waiting_dependency",
    }
    rebuilt.mark_task_completed("b", True, "ok")
    assert [t.task_id for t in rebuilt.get_ready_tasks()] == ["c"]
    # Lines into tasks that were there before the build are edits: I3 still applies.
    with pytest.raises(ValueError, match="only pending or waiting_dependency tasks may gain"):
        target.build_constellation(
            {
                "tasks": [{"task_id": "x", "description": "d"}],
                "dependencies": [{"from_task_id": "x", "to_task_id": "b"}],
            },
            clear_existing=False,
        )
    assert target.get_task("x") is None
