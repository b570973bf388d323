"""The editor's command registry: named, categorised operations callable by name (spec E §5.1).

Each entry adapts the reference's command arguments (``add_task(task_data=...)``,
``update_task(task_id, updates=...)``, ...) to the editor method that performs it, so a caller that
only knows a command's name (a tool layer, a script, a replayed log) can list, inspect and run it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starweave.errors import ConstellationError, UnknownCommandError

from .schema import TaskConstellationSchema

if TYPE_CHECKING:
    from .editor import ConstellationEditor

TASK_MANAGEMENT = "task_management"
DEPENDENCY_MANAGEMENT = "dependency_management"
BULK_OPERATIONS = "bulk_operations"
FILE_OPERATIONS = "file_operations"


@dataclass(frozen=True)
class CommandSpec:
    """One registered command: how to describe it and how to run it on an editor."""

    name: str
    description: str
    category: str
    is_undoable: bool
    run: Callable[..., Any]  # run(editor, *args, **kwargs)

    def parameters(self) -> list[dict[str, Any]]:
        """The command's arguments (the editor argument excluded)."""
        params = list(inspect.signature(self.run).parameters.values())[1:]
        return [
            {
                "name": p.name,
                "required": p.default is inspect.Parameter.empty,
                **({} if p.default is inspect.Parameter.empty else {"default": p.default}),
            }
            for p in params
        ]


COMMANDS: dict[str, CommandSpec] = {}


def register_command(
    name: str, description: str, category: str, is_undoable: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``run(editor, ...)`` under ``name`` (a later registration replaces an earlier one)."""

    def decorate(run: Callable[..., Any]) -> Callable[..., Any]:
        COMMANDS[name] = CommandSpec(name, description, category, is_undoable, run)
        return run

    return decorate


def get_command(name: str) -> CommandSpec:
    """The command registered as ``name``, or UnknownCommandError naming the known ones."""
    spec = COMMANDS.get(name)
    if spec is None:
        raise UnknownCommandError(
            f"Unknown command {name!r}; available commands: {', '.join(sorted(COMMANDS))}"
        )
    return spec


def list_commands(category: str | None = None) -> dict[str, dict[str, str]]:
    """``{name: {description, category}}``, optionally for one category."""
    return {
        name: {"description": spec.description, "category": spec.category}
        for name, spec in COMMANDS.items()
        if category is None or spec.category == category
    }


def command_categories() -> list[str]:
    """Every category that has a command, sorted."""
    return sorted({spec.category for spec in COMMANDS.values()})


def command_metadata(name: str) -> dict[str, Any]:
    """Description, category, undoability and parameters of one command."""
    spec = get_command(name)
    return {
        "name": spec.name,
        "description": spec.description,
        "category": spec.category,
        "is_undoable": spec.is_undoable,
        "parameters": spec.parameters(),
    }


def execute_command(editor: ConstellationEditor, name: str, /, *args: Any, **kwargs: Any) -> Any:
    """Run a command by name; wrong arguments are reported with the command's signature."""
    spec = get_command(name)
    try:
        inspect.signature(spec.run).bind(editor, *args, **kwargs)
    except TypeError as exc:
        expected = ", ".join(p["name"] if p["required"] else f"{p['name']}=..." for p in spec.parameters())
        raise ConstellationError(f"Command {name} takes ({expected}): {exc}") from None
    return spec.run(editor, *args, **kwargs)


# --------------------------------------------------------------------------------- the commands
@register_command("add_task", "Add a task from its dictionary form", TASK_MANAGEMENT)
def _add_task(editor: ConstellationEditor, task_data: dict[str, Any]) -> Any:
    return editor.add_task(task_data)


@register_command("remove_task", "Remove a task and every dependency touching it", TASK_MANAGEMENT)
def _remove_task(editor: ConstellationEditor, task_id: str) -> Any:
    return editor.remove_task(task_id)


@register_command("update_task", "Change fields of a pending or waiting task", TASK_MANAGEMENT)
def _update_task(editor: ConstellationEditor, task_id: str, updates: dict[str, Any]) -> Any:
    return editor.update_task(task_id, **updates)


@register_command("add_dependency", "Add a dependency from its dictionary form", DEPENDENCY_MANAGEMENT)
def _add_dependency(editor: ConstellationEditor, dependency_data: dict[str, Any]) -> Any:
    return editor.add_dependency(dependency_data)


@register_command("remove_dependency", "Remove a dependency", DEPENDENCY_MANAGEMENT)
def _remove_dependency(editor: ConstellationEditor, dependency_id: str) -> Any:
    return editor.remove_dependency(dependency_id)


@register_command("update_dependency", "Change a dependency's type or condition", DEPENDENCY_MANAGEMENT)
def _update_dependency(editor: ConstellationEditor, dependency_id: str, updates: dict[str, Any]) -> Any:
    return editor.update_dependency(dependency_id, **updates)


@register_command("build_constellation", "Build tasks and dependencies from a schema", BULK_OPERATIONS)
def _build_constellation(
    editor: ConstellationEditor, config: TaskConstellationSchema | dict[str, Any], clear_existing: bool = True
) -> Any:
    return editor.build_constellation(config, clear_existing)


@register_command("clear_constellation", "Remove every task and dependency", BULK_OPERATIONS)
def _clear_constellation(editor: ConstellationEditor) -> Any:
    return editor.clear_constellation()


@register_command("load_constellation", "Replace the constellation with one saved as JSON", FILE_OPERATIONS)
def _load_constellation(editor: ConstellationEditor, file_path: str | Path) -> Any:
    return editor.load_constellation(file_path)


@register_command("save_constellation", "Save the constellation as JSON", FILE_OPERATIONS, is_undoable=False)
def _save_constellation(editor: ConstellationEditor, file_path: str | Path) -> Any:
    return editor.save_constellation(file_path)
