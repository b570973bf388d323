"""ConstellationEditor: every mutation of a TaskConstellation as an undoable command (spec B §3)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console

from starweave.errors import ConstellationError, DuplicateIdError

from . import command_registry
from .commands import (
    CommandInvoker,
    EditCommand,
    check_new_line,
    check_new_task,
    require_line,
    require_task,
    restore_memento,
    take_memento,
)
from .constellation import TaskConstellation
from .enums import DependencyType, TaskPriority, parse_enum
from .schema import TaskConstellationSchema
from .serialization import constellation_from_dict, constellation_from_json, line_from_dict, task_from_dict
from .star_line import TaskStarLine
from .subgraph import merge_command, subgraph_of
from .task_star import TaskStar

logger = logging.getLogger(__name__)

Observer = Callable[["ConstellationEditor", str, Any], None]


def _as_task(task: TaskStar | dict[str, Any]) -> TaskStar:
    return task if isinstance(task, TaskStar) else task_from_dict(task)


def _as_line(line: TaskStarLine | dict[str, Any]) -> TaskStarLine:
    return line if isinstance(line, TaskStarLine) else line_from_dict(line)


def _replace_with(c: TaskConstellation, new: TaskConstellation) -> TaskConstellation:
    """Give ``c`` (in place) the whole state of ``new``."""
    restore_memento(c, take_memento(new))
    return c


class ConstellationEditor:
    """Edits one constellation through commands with bounded undo/redo history and change observers."""

    def __init__(
        self,
        constellation: TaskConstellation | None = None,
        enable_history: bool = True,
        max_history_size: int = 100,
    ) -> None:
        self._invoker = CommandInvoker(constellation or TaskConstellation(), enable_history, max_history_size)
        self._observers: list[Observer] = []

    @property
    def constellation(self) -> TaskConstellation:
        """The edited constellation (the same object for the editor's whole life)."""
        return self._invoker.constellation

    # ----------------------------------------------------------------- plumbing
    def _execute(self, command: EditCommand) -> Any:
        result = self._invoker.execute(command)
        self._notify(command.name, result)
        return result

    def _notify(self, name: str, result: Any) -> None:
        for observer in list(self._observers):
            try:
                observer(self, name, result)
            except Exception:  # an observer's bug must not break editing
                logger.exception("Constellation editor observer %r failed on %s", observer, name)

    def add_observer(self, observer: Observer) -> None:
        """Call ``observer(editor, command_name, result)`` after every operation."""
        if observer not in self._observers:
            self._observers.append(observer)

    def remove_observer(self, observer: Observer) -> None:
        """Stop calling ``observer`` (no error when it was not registered)."""
        if observer in self._observers:
            self._observers.remove(observer)

    # ----------------------------------------------------------------- tasks
    def add_task(self, task: TaskStar | dict[str, Any]) -> TaskStar:
        """Add a task (object or dict); duplicate ids are refused before anything changes."""
        star = _as_task(task)

        def run(c: TaskConstellation) -> TaskStar:
            c.add_task(star)
            return star

        return self._execute(
            EditCommand("add_task", f"Add task: {star.task_id}", run, lambda c: check_new_task(c, star))
        )

    def create_and_add_task(self, task_id: str, description: str, name: str = "", **kwargs: Any) -> TaskStar:
        """Build a TaskStar (priority may be a name like "HIGH") and add it."""
        if "priority" in kwargs:
            kwargs["priority"] = parse_enum(TaskPriority, kwargs["priority"])
        return self.add_task(TaskStar(task_id=task_id, name=name, description=description, **kwargs))

    def update_task(self, task_id: str, **updates: Any) -> TaskStar:
        """Change task fields (see TaskConstellation.update_task); refused if the task is not modifiable."""
        if "priority" in updates:
            updates["priority"] = parse_enum(TaskPriority, updates["priority"])

        def check(c: TaskConstellation) -> None:
            require_task(c, task_id)
            if not updates:
                raise ConstellationError(f"No fields given to update task {task_id}")
            c.guard_task_change(task_id)

        return self._execute(
            EditCommand(
                "update_task",
                f"Update task: {task_id}",
                lambda c: c.update_task(task_id, **updates),
                check,
            )
        )

    def remove_task(self, task_id: str) -> str:
        """Remove a task and its lines; returns the id."""

        def check(c: TaskConstellation) -> None:
            require_task(c, task_id)
            c.guard_task_change(task_id, "remove", "removed")

        def run(c: TaskConstellation) -> str:
            c.remove_task(task_id)
            return task_id

        return self._execute(EditCommand("remove_task", f"Remove task: {task_id}", run, check))

    def get_task(self, task_id: str) -> TaskStar | None:
        """The task or None."""
        return self.constellation.get_task(task_id)

    def list_tasks(self) -> list[TaskStar]:
        """All tasks in insertion order."""
        return self.constellation.get_all_tasks()

    def get_ready_tasks(self) -> list[TaskStar]:
        """Ready tasks, highest priority first."""
        return self.constellation.get_ready_tasks()

    # ----------------------------------------------------------------- dependencies
    def add_dependency(self, dependency: TaskStarLine | dict[str, Any]) -> TaskStarLine:
        """Add a line (object or dict); unknown endpoints, duplicates and cycles are refused first."""
        line = _as_line(dependency)

        def run(c: TaskConstellation) -> TaskStarLine:
            c.add_dependency(line)
            return line

        return self._execute(
            EditCommand(
                "add_dependency",
                f"Add dependency: {line.from_task_id} → {line.to_task_id}",
                run,
                lambda c: check_new_line(c, line),
            )
        )

    def create_and_add_dependency(
        self,
        from_task_id: str,
        to_task_id: str,
        dependency_type: DependencyType | str = DependencyType.UNCONDITIONAL,
        **kwargs: Any,
    ) -> TaskStarLine:
        """Build a TaskStarLine (type may be "SUCCESS_ONLY" etc.) and add it."""
        kind = parse_enum(DependencyType, dependency_type)
        return self.add_dependency(TaskStarLine(from_task_id, to_task_id, kind, **kwargs))

    def update_dependency(self, dependency_id: str, **updates: Any) -> TaskStarLine:
        """Change dependency_type, condition_description, condition_evaluator or metadata."""
        if "dependency_type" in updates:
            updates["dependency_type"] = parse_enum(DependencyType, updates["dependency_type"])

        def check(c: TaskConstellation) -> None:
            line = require_line(c, dependency_id)
            if not updates:
                raise ConstellationError(f"No fields given to update dependency {dependency_id}")
            c.guard_line_change(line)

        return self._execute(
            EditCommand(
                "update_dependency",
                f"Update dependency: {dependency_id}",
                lambda c: c.update_dependency(dependency_id, **updates),
                check,
            )
        )

    def remove_dependency(self, dependency_id: str) -> str:
        """Remove a line; returns its id."""

        def check(c: TaskConstellation) -> None:
            c.guard_line_change(require_line(c, dependency_id))

        def run(c: TaskConstellation) -> str:
            c.remove_dependency(dependency_id)
            return dependency_id

        return self._execute(
            EditCommand("remove_dependency", f"Remove dependency: {dependency_id}", run, check)
        )

    def get_dependency(self, dependency_id: str) -> TaskStarLine | None:
        """The line or None."""
        return self.constellation.get_dependency(dependency_id)

    def list_dependencies(self) -> list[TaskStarLine]:
        """All lines in insertion order."""
        return self.constellation.get_all_dependencies()

    def get_task_dependencies(self, task_id: str) -> list[TaskStarLine]:
        """Lines into ``task_id``."""
        return self.constellation.get_task_dependencies(task_id)

    # ----------------------------------------------------------------- history
    def undo(self) -> bool:
        """Revert the last command; False when there is nothing to undo."""
        command = self._invoker.undo()
        if command is not None:
            self._notify("undo", command.description)
        return command is not None

    def redo(self) -> bool:
        """Re-apply the last undone command; False when there is nothing to redo."""
        command = self._invoker.redo()
        if command is not None:
            self._notify("redo", command.description)
        return command is not None

    def can_undo(self) -> bool:
        """Whether undo() would do something."""
        return self._invoker.can_undo()

    def can_redo(self) -> bool:
        """Whether redo() would do something."""
        return self._invoker.can_redo()

    def get_undo_description(self) -> str | None:
        """Description of the command undo() would revert."""
        return self._invoker.undo_description()

    def get_redo_description(self) -> str | None:
        """Description of the command redo() would re-apply."""
        return self._invoker.redo_description()

    def clear_history(self) -> None:
        """Forget undo/redo history."""
        self._invoker.clear()

    def get_history(self) -> list[str]:
        """Undoable command descriptions, oldest first (e.g. "Add task: fetch_data")."""
        return self._invoker.history()

    # ----------------------------------------------------------------- bulk
    def build_constellation(
        self, config: TaskConstellationSchema | dict[str, Any], clear_existing: bool = True
    ) -> TaskConstellation:
        """Build from a (lenient) schema: clear (optionally), add tasks, add lines, validate."""
        schema = (
            config
            if isinstance(config, TaskConstellationSchema)
            else TaskConstellationSchema.model_validate(config)
        )
        data = schema.model_dump()
        return self.build_from_tasks_and_dependencies(
            list(data["tasks"].values()),
            list(data["dependencies"].values()),
            clear_existing=clear_existing,
            metadata=data["metadata"] or None,
        )

    def build_from_tasks_and_dependencies(
        self,
        tasks: Iterable[TaskStar | dict[str, Any]],
        dependencies: Iterable[TaskStarLine | dict[str, Any]],
        clear_existing: bool = True,
        metadata: dict[str, Any] | None = None,
    ) -> TaskConstellation:
        """Bulk build as one undoable command; any refused task or line rolls the whole build back."""
        stars = [_as_task(t) for t in tasks]
        lines = [_as_line(d) for d in dependencies]

        def check(c: TaskConstellation) -> None:
            existing = set() if clear_existing else {t.task_id for t in c.get_all_tasks()}
            for star in stars:
                if star.task_id in existing:
                    raise DuplicateIdError(
                        f"Task {star.task_id} appears twice in the build; ids must be unique"
                    )
                existing.add(star.task_id)

        def run(c: TaskConstellation) -> TaskConstellation:
            if clear_existing:
                _replace_with(c, TaskConstellation(c.constellation_id, c.name))
            c.add_tasks(stars)
            # Lines into the tasks being built describe their state (they may have run already);
            # lines into tasks that were there before are edits and obey invariant I3.
            built = {star.task_id for star in stars}
            c.restore_dependencies(line for line in lines if line.to_task_id in built)
            c.add_dependencies(line for line in lines if line.to_task_id not in built)
            if metadata:
                c.metadata.update(metadata)
            ok, errors = c.validate_dag()
            if not ok:
                raise ConstellationError("Built constellation is invalid: " + "; ".join(errors))
            return c

        description = f"Build constellation: {len(stars)} tasks, {len(lines)} dependencies"
        return self._execute(EditCommand("build_constellation", description, run, check, needs_rollback=True))

    def clear_constellation(self) -> TaskConstellation:
        """Remove everything (id and name are kept) as one undoable command."""

        def run(c: TaskConstellation) -> TaskConstellation:
            return _replace_with(c, TaskConstellation(c.constellation_id, c.name))

        return self._execute(EditCommand("clear_constellation", "Clear constellation", run))

    def batch_operations(self, operations: Iterable[Callable[[ConstellationEditor], Any]]) -> list[Any]:
        """Run each ``op(editor)``; a failing op's exception is put in the result list and the rest run."""
        results: list[Any] = []
        for operation in operations:
            try:
                results.append(operation(self))
            except Exception as exc:  # the documented contract: failures are returned, not raised
                results.append(exc)
        return results

    # ----------------------------------------------------------------- files
    def save_constellation(self, path: str | Path) -> str:
        """Write the constellation JSON to ``path``; returns the path."""
        self.constellation.to_json(save_path=path)
        return str(path)

    def load_from_dict(self, data: dict[str, Any]) -> TaskConstellation:
        """Replace the constellation's contents with ``data`` (undoable)."""
        loaded = constellation_from_dict(data)

        def run(c: TaskConstellation) -> TaskConstellation:
            return _replace_with(c, loaded)

        return self._execute(EditCommand("load_constellation", f"Load constellation: {loaded.name}", run))

    def load_from_json_string(self, text: str) -> TaskConstellation:
        """Replace the contents from JSON text (undoable)."""
        return self.load_from_dict(constellation_from_json(json_data=text).to_dict())

    def load_constellation(self, path: str | Path) -> TaskConstellation:
        """Replace the contents from a JSON file (undoable)."""
        return self.load_from_dict(constellation_from_json(file_path=path).to_dict())

    # ----------------------------------------------------------------- validation and views
    def validate_constellation(self) -> tuple[bool, list[str]]:
        """(valid, errors) of the DAG."""
        return self.constellation.validate_dag()

    def has_cycles(self) -> bool:
        """Whether the graph has a cycle (never true through the editor)."""
        return self.constellation.has_cycle()

    def get_topological_order(self) -> list[str]:
        """Task ids in dependency order."""
        return self.constellation.get_topological_order()

    def get_statistics(self) -> dict[str, Any]:
        """Constellation statistics plus the editor's counters."""
        stats = self.constellation.get_statistics()
        stats.update(
            editor_execution_count=self._invoker.execution_count,
            editor_history_size=self._invoker.history_size(),
            editor_can_undo=self.can_undo(),
            editor_can_redo=self.can_redo(),
        )
        return stats

    # ----------------------------------------------------------------- advanced
    def create_subgraph(self, task_ids: Iterable[str]) -> ConstellationEditor:
        """A new editor over a copy of the given tasks and the lines between them."""
        return ConstellationEditor(subgraph_of(self.constellation, task_ids))

    def merge_constellation(self, other_editor: ConstellationEditor, prefix: str = "") -> TaskConstellation:
        """Copy the other editor's tasks and lines in, ids prefixed with ``prefix`` (undoable)."""
        return self._execute(merge_command(other_editor.constellation, prefix))

    def display_constellation(self, mode: str = "overview", console: Console | None = None) -> None:
        """Print the constellation in one of the display modes (see ``display.DISPLAY_MODES``)."""
        self.constellation.display_dag(mode, console)

    # ----------------------------------------------------------------- command registry
    def list_available_commands(self, category: str | None = None) -> dict[str, dict[str, str]]:
        """``{name: {description, category}}`` of the commands ``execute_command_by_name`` runs."""
        return command_registry.list_commands(category)

    def get_command_categories(self) -> list[str]:
        """The registry's categories (task_management, dependency_management, ...)."""
        return command_registry.command_categories()

    def get_command_metadata(self, name: str) -> dict[str, Any]:
        """Description, category, undoability and parameters of a command."""
        return command_registry.command_metadata(name)

    def execute_command_by_name(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Run a registered command, e.g. ``("add_task", task_data={...})``."""
        return command_registry.execute_command(self, name, *args, **kwargs)
