"""Editor commands and the :class:`CommandInvoker` (undo/redo history).

Every command checks its preconditions in :meth:`EditCommand.check` before anything changes, so a
refused edit records nothing. Undo restores a *memento* (a deep copy of the constellation's state taken
just before the command ran) instead of replaying inverse operations: that is the only way to bring back
the exact prior JSON (timestamps, dict order, satisfaction flags, condition evaluators) for every
command, including bulk build, clear and merge. The price is O(V+E) per recorded command; editors that
do not need undo pass ``enable_history=False`` and pay nothing.
"""

from __future__ import annotations

import copy
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starweave.errors import (
    ConstellationError,
    CycleError,
    DependencyNotFoundError,
    DuplicateIdError,
    TaskNotFoundError,
)

from .constellation import TaskConstellation
from .star_line import TaskStarLine
from .task_star import TaskStar

logger = logging.getLogger(__name__)


class _Owner:
    """Stand-in for the constellation inside a memento (tasks and lines point back to their owner)."""


_OWNER = _Owner()

Memento = dict[str, Any]


def _shared(constellation: TaskConstellation) -> dict[int, Any]:
    """Objects a memento references instead of copying: task results and errors and condition
    evaluators belong to the caller (they may not be copyable at all, e.g. a lock or a bound method)."""
    memo: dict[int, Any] = {}
    for task in constellation.get_all_tasks():
        memo[id(task.result)] = task.result
        memo[id(task.error)] = task.error
    for line in constellation.get_all_dependencies():
        memo[id(line.condition_evaluator)] = line.condition_evaluator
    return memo


def take_memento(constellation: TaskConstellation) -> Memento:
    """A deep copy of the constellation's state, detached from the live object."""
    memo = _shared(constellation)
    memo[id(constellation)] = _OWNER
    return copy.deepcopy(constellation.__dict__, memo)


def _detach(constellation: TaskConstellation) -> None:
    """Cut the objects being replaced loose, so a stale reference can never reach the new state."""
    for task in constellation.get_all_tasks():
        task._owner = None
        task._out, task._in, task._waiting = {}, {}, 0
    for line in constellation.get_all_dependencies():
        line._owner = None
        line._blocking = False


def restore_memento(constellation: TaskConstellation, memento: Memento) -> None:
    """Put ``memento`` back into ``constellation`` in place (the memento stays reusable)."""
    memo: dict[int, Any] = {id(_OWNER): constellation}
    for task in memento["_tasks"].values():
        memo[id(task._result)] = task._result
        memo[id(task._error)] = task._error
    for line in memento["_lines"].values():
        memo[id(line._condition_evaluator)] = line._condition_evaluator
    state = copy.deepcopy(memento, memo)
    _detach(constellation)
    constellation.__dict__.clear()
    constellation.__dict__.update(state)


def snapshot(constellation: TaskConstellation) -> TaskConstellation:
    """A detached copy of ``constellation`` as it is now (same ids, statuses and results), for
    comparing a live constellation before and after an edit."""
    copy_ = TaskConstellation(constellation.constellation_id, constellation.name)
    restore_memento(copy_, take_memento(constellation))
    return copy_


@dataclass
class EditCommand:
    """One undoable edit: ``check`` refuses invalid edits before ``run`` changes anything."""

    name: str
    description: str
    run: Callable[[TaskConstellation], Any]
    check: Callable[[TaskConstellation], None] = field(default=lambda _c: None)
    # Bulk commands can fail half-way inside the model; they are rolled back even without history.
    needs_rollback: bool = False


def require_task(c: TaskConstellation, task_id: str) -> TaskStar:
    """The task, or TaskNotFoundError naming the id."""
    task = c.get_task(task_id)
    if task is None:
        raise TaskNotFoundError(f"Task {task_id} not found in constellation {c.constellation_id}")
    return task


def require_line(c: TaskConstellation, line_id: str) -> TaskStarLine:
    """The dependency line, or DependencyNotFoundError naming the id."""
    line = c.get_dependency(line_id)
    if line is None:
        raise DependencyNotFoundError(f"Dependency {line_id} not found in constellation {c.constellation_id}")
    return line


def check_new_task(c: TaskConstellation, task: TaskStar) -> None:
    """Refuse a duplicate task id before insertion."""
    if c.get_task(task.task_id) is not None:
        raise DuplicateIdError(f"Task {task.task_id} already exists; use a new task_id")


def check_new_line(c: TaskConstellation, line: TaskStarLine) -> None:
    """Refuse duplicate ids, unknown endpoints and cycles before insertion (invariant I2)."""
    if c.get_dependency(line.line_id) is not None:
        raise DuplicateIdError(f"Dependency {line.line_id} already exists; use a new line_id")
    if c.get_task(line.from_task_id) is None:
        raise TaskNotFoundError(f"Source task {line.from_task_id} not found")
    if c.get_task(line.to_task_id) is None:
        raise TaskNotFoundError(f"Target task {line.to_task_id} not found")
    if c.dag.would_create_cycle(line.from_task_id, line.to_task_id):
        raise CycleError(f"Adding dependency {line.from_task_id} -> {line.to_task_id} would create a cycle")


@dataclass
class _Entry:
    command: EditCommand
    before: Memento
    after: Memento | None = None


class CommandInvoker:
    """Runs commands against one constellation and keeps a bounded undo/redo history."""

    def __init__(
        self, constellation: TaskConstellation, enable_history: bool = True, max_history_size: int = 100
    ):
        if max_history_size < 1:
            raise ConstellationError("max_history_size must be at least 1")
        self.constellation = constellation
        self.enable_history = enable_history
        self._undo: deque[_Entry] = deque(maxlen=max_history_size)
        self._redo: list[_Entry] = []
        self.execution_count = 0

    def execute(self, command: EditCommand) -> Any:
        """Check, run and record ``command``; on failure the constellation is left exactly as before."""
        c = self.constellation
        command.check(c)
        before = take_memento(c) if self.enable_history or command.needs_rollback else None
        done = False
        try:
            result = command.run(c)
            done = True
        finally:
            # Single edits are atomic in the model (refused before any change), so only bulk
            # commands that can fail half-way are rolled back; a refused single edit keeps every
            # object (and every reference the orchestrator holds) as it was.
            if not done and command.needs_rollback and before is not None:
                restore_memento(c, before)
        self.execution_count += 1
        if self.enable_history and before is not None:
            self._undo.append(_Entry(command, before))
            self._redo.clear()
        return result

    def can_undo(self) -> bool:
        """Whether there is a command to undo."""
        return bool(self._undo)

    def can_redo(self) -> bool:
        """Whether there is an undone command to redo."""
        return bool(self._redo)

    def undo(self) -> EditCommand | None:
        """Restore the state before the last command; returns it, or None when nothing to undo."""
        if not self._undo:
            return None
        entry = self._undo.pop()
        entry.after = take_memento(self.constellation)
        restore_memento(self.constellation, entry.before)
        self._redo.append(entry)
        return entry.command

    def redo(self) -> EditCommand | None:
        """Re-apply the last undone command (restoring its exact resulting state)."""
        if not self._redo:
            return None
        entry = self._redo.pop()
        if entry.after is None:  # pragma: no cover - undo always sets it
            raise ConstellationError("Redo state missing; clear the history")
        restore_memento(self.constellation, entry.after)
        self._undo.append(entry)
        return entry.command

    def undo_description(self) -> str | None:
        """Description of the command ``undo`` would revert."""
        return self._undo[-1].command.description if self._undo else None

    def redo_description(self) -> str | None:
        """Description of the command ``redo`` would re-apply."""
        return self._redo[-1].command.description if self._redo else None

    def history(self) -> list[str]:
        """Descriptions of the undoable commands, oldest first."""
        return [entry.command.description for entry in self._undo]

    def history_size(self) -> int:
        """Number of undoable commands."""
        return len(self._undo)

    def clear(self) -> None:
        """Forget undo and redo history."""
        self._undo.clear()
        self._redo.clear()
