"""The editor's command registry, the display modes and TaskConfiguration."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from starweave.errors import ConstellationError, UnknownCommandError
from starweave.galaxy.constellation import (
    DISPLAY_MODES,
    ConstellationEditor,
    TaskConfiguration,
    TaskConstellationSchema,
    TaskPriority,
    TaskStar,
    render_constellation,
)
from starweave.galaxy.constellation import schema as schema_module


def _editor() -> ConstellationEditor:
    editor = ConstellationEditor()
    editor.create_and_add_task("fetch", "Fetch the data", name="fetch_data", target_device_id="linux_1")
    editor.create_and_add_task("plot", "Plot [bold]it[/bold]", name="plot")
    editor.create_and_add_dependency("fetch", "plot", "SUCCESS_ONLY", condition_description="data ready")
    return editor


def test_registry_lists_categories_and_metadata() -> None:
    editor = ConstellationEditor()
    commands = editor.list_available_commands()
    assert {"add_task", "remove_task", "update_task", "add_dependency", "remove_dependency"} <= set(commands)
    assert commands["add_task"] == {
        "description": "Add a task from its dictionary form",
        "category": "task_management",
    }
    assert editor.get_command_categories() == [
        "bulk_operations",
        "dependency_management",
        "file_operations",
        "task_management",
    ]
    assert set(editor.list_available_commands("dependency_management")) == {
        "add_dependency",
        "remove_dependency",
        "update_dependency",
    }
    meta = editor.get_command_metadata("update_task")
    assert meta["is_undoable"] is True and meta["category"] == "task_management"
    assert meta["parameters"] == [
        {"name": "task_id", "required": True},
        {"name": "updates", "required": True},
    ]
    assert editor.get_command_metadata("save_constellation")["is_undoable"] is False
    assert editor.get_command_metadata("build_constellation")["parameters"][1] == {
        "name": "clear_existing",
        "required": False,
        "default": True,
    }


def test_execute_command_by_name_runs_undoable_edits(tmp_path: Path) -> None:
    editor = ConstellationEditor()
    task = editor.execute_command_by_name("add_task", task_data={"task_id": "a", "description": "do a"})
    assert isinstance(task, TaskStar) and editor.get_task("a") is task
    editor.execute_command_by_name("add_task", task_data={"task_id": "b", "description": "do b"})
    editor.execute_command_by_name(
        "add_dependency", dependency_data={"line_id": "l1", "from_task_id": "a", "to_task_id": "b"}
    )
    editor.execute_command_by_name("update_task", "b", updates={"priority": "HIGH"})
    assert editor.get_task("b").priority is TaskPriority.HIGH  # type: ignore[union-attr]
    assert editor.undo() and editor.get_task("b").priority is TaskPriority.MEDIUM  # type: ignore[union-attr]
    path = tmp_path / "c.json"
    assert editor.execute_command_by_name("save_constellation", file_path=path) == str(path)
    editor.execute_command_by_name("clear_constellation")
    assert editor.list_tasks() == []
    editor.execute_command_by_name("load_constellation", path)
    assert [t.task_id for t in editor.list_tasks()] == ["a", "b"]
    editor.execute_command_by_name(
        "build_constellation", {"tasks": [{"task_id": "x", "description": "x"}]}, clear_existing=False
    )
    assert editor.get_task("x") is not None
    assert editor.execute_command_by_name("remove_dependency", "l1") == "l1"


def test_execute_command_by_name_errors_are_specific() -> None:
    editor = ConstellationEditor()
    with pytest.raises(
        UnknownCommandError, match="Unknown command 'frobnicate'; available commands: add_dependency"
    ):
        editor.execute_command_by_name("frobnicate")
    with pytest.raises(UnknownCommandError):
        editor.get_command_metadata("frobnicate")
    with pytest.raises(ConstellationError, match=r"Command update_task takes \(task_id, updates\)"):
        editor.execute_command_by_name("update_task", "a", name="x")
    assert editor.get_history() == []


def _text(mode: str, editor: ConstellationEditor) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(render_constellation(editor.constellation, mode))
    return out.getvalue()


def test_display_modes_render_their_content() -> None:
    editor = _editor()
    c = editor.constellation
    c.start_task("fetch")
    c.mark_task_completed("fetch", True, "rows=42")
    overview = _text("overview", editor)
    assert "State" in overview and "executing" in overview and "completed: 1" in overview
    assert "Longest path" in overview and "2 tasks" in overview
    topology = _text("topology", editor)
    assert "Layer 0" in topology and "Layer 1" in topology and "⬅️ ⇒ fetch: data ready" in topology
    details = _text("details", editor)
    assert "fetch_data" in details and "linux_1" in details and "success_only" in details
    assert "Plot [bold]it[/bold]" in details  # markup in task text is shown literally
    execution = _text("execution", editor)
    assert "1/2 tasks finished" in execution and "rows=42" in execution
    assert DISPLAY_MODES == ("overview", "topology", "details", "execution")
    with pytest.raises(ConstellationError, match="Unknown display mode 'pretty'; use one of overview"):
        render_constellation(c, "pretty")


def test_display_dag_and_display_constellation_print() -> None:
    editor = _editor()
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    editor.display_constellation("execution", console)
    editor.constellation.display_dag("overview", console)
    assert "0/2 tasks finished" in out.getvalue() and "Constellation overview" in out.getvalue()


def test_task_configuration_fills_defaults_but_explicit_arguments_win() -> None:
    config = TaskConfiguration(timeout=30, retry_count=2, retry_delay=0.5, priority=TaskPriority.HIGH)
    task = TaskStar(task_id="a", description="x", config=config)
    assert (task.timeout, task.retry_count, task.priority, task.retry_delay) == (
        30,
        2,
        TaskPriority.HIGH,
        0.5,
    )
    assert task.config is config
    explicit = TaskStar(
        task_id="b", description="x", timeout=5, retry_count=1, priority=TaskPriority.LOW, config=config
    )
    assert (explicit.timeout, explicit.retry_count, explicit.priority) == (5, 1, TaskPriority.LOW)
    assert TaskStar(task_id="c", description="x").retry_delay == 1.0
    with pytest.raises(ValueError, match="timeout must be positive"):
        TaskConfiguration(timeout=0)
    with pytest.raises(ValueError, match="retry_count must be >= 0"):
        TaskConfiguration(retry_count=-1)


def test_generated_ids_never_collide_with_given_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = iter(["task_1", "task_1", "task_2", "task_3"])
    monkeypatch.setattr(schema_module, "generate_task_id", lambda: next(drawn))
    schema = TaskConstellationSchema.model_validate(
        {"tasks": [{"task_id": "task_1", "description": "a"}, {"description": "b"}, {"description": "c"}]}
    )
    assert list(schema.tasks) == ["task_1", "task_2", "task_3"]
