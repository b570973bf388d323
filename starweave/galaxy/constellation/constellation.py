"""TaskConstellation: a mutable DAG of TaskStars joined by TaskStarLines.

Invariants enforced on every edit (each violation raises a ConstellationError and leaves the
constellation unchanged):

- I1 single assignment: a task's device can only change while it is pending or waiting.
- I2 acyclic: an edge is checked before insertion (see ``graph.DagIndex``).
- I3 valid update: only pending/waiting tasks, and lines whose target is such a task, change.

Readiness tracking, status changes and failure propagation live in ``execution.py``.
"""

from __future__ import annotations

import gc
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from starweave.errors import (
    DependencyNotFoundError,
    DuplicateIdError,
    ModificationError,
    TaskNotFoundError,
    UnsatisfiableDependencyError,
)

from .enums import ConstellationState, DependencyType, TaskStatus, parse_enum
from .execution import ConstellationExecution
from .graph import DagIndex
from .metrics import ConstellationAnalysis
from .serialization import ConstellationSerialization
from .star_line import ConditionEvaluator, TaskStarLine
from .task_star import TaskStar, utc_now


@contextmanager
def gc_paused() -> Iterator[None]:
    """Defer the cyclic garbage collector during a bulk build.

    Building hundreds of thousands of linked objects otherwise triggers repeated full collections
    that cost more than the build itself; nothing built here needs collecting meanwhile.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _new_constellation_id() -> str:
    return f"constellation_{utc_now().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:8]}"


_PENDING = TaskStatus.PENDING
_WAITING = TaskStatus.WAITING_DEPENDENCY
_TERMINAL = (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)  # identity-compared
_LINE_FIELDS = frozenset({"dependency_type", "condition_description", "condition_evaluator", "metadata"})
_TASK_FIELDS = frozenset(
    {"name", "description", "tips", "target_device_id", "device_type", "priority", "timeout", "task_data"}
)


class TaskConstellation(ConstellationExecution, ConstellationAnalysis, ConstellationSerialization):
    """The task DAG with its execution state, readiness tracking and invariants."""

    def __init__(self, constellation_id: str | None = None, name: str | None = None) -> None:
        self.constellation_id = constellation_id or _new_constellation_id()
        self.name = name or self.constellation_id
        self.state = ConstellationState.CREATED
        self.metadata: dict[str, Any] = {}
        self._dag: DagIndex[TaskStar] = DagIndex()
        self._tasks: dict[str, TaskStar] = self._dag.nodes  # the graph's node table is the task table
        self._lines: dict[str, TaskStarLine] = {}
        self._ready: dict[str, None] = {}  # insertion-ordered set of ready task ids
        self._ready_pops = 0  # removals since the ready dict was last compacted
        self._counts: dict[TaskStatus, int] = dict.fromkeys(TaskStatus, 0)
        self._ended: deque[TaskStar] = deque()  # tasks whose outgoing lines await evaluation
        self._propagating = False
        self._newly_ready: list[TaskStar] = []
        self.created_at = utc_now()
        self.updated_at = self.created_at
        self.execution_start_time: datetime | None = None
        self.execution_end_time: datetime | None = None

    # ----------------------------------------------------------------- basic views
    @property
    def tasks(self) -> dict[str, TaskStar]:
        """Shallow copy of ``{task_id: task}``."""
        return dict(self._tasks)

    @property
    def dependencies(self) -> dict[str, TaskStarLine]:
        """Shallow copy of ``{line_id: line}``."""
        return dict(self._lines)

    @property
    def dag(self) -> DagIndex[TaskStar]:
        """The adjacency index (read it; mutate only through the constellation)."""
        return self._dag

    @property
    def task_count(self) -> int:
        """Number of tasks."""
        return len(self._tasks)

    @property
    def dependency_count(self) -> int:
        """Number of dependency lines."""
        return len(self._lines)

    @property
    def execution_duration(self) -> float | None:
        """Seconds between ``start_execution`` and ``complete_execution``."""
        if self.execution_start_time is None or self.execution_end_time is None:
            return None
        return (self.execution_end_time - self.execution_start_time).total_seconds()

    def status_counts(self) -> dict[TaskStatus, int]:
        """Number of tasks per status (maintained incrementally)."""
        return dict(self._counts)

    # ----------------------------------------------------------------- tasks
    def add_task(self, task: TaskStar) -> None:
        """Add a task (any status, so saved constellations can be restored)."""
        self._insert_task(task)
        self._touch()

    def _insert_task(self, task: TaskStar) -> None:
        task_id = task._task_id
        if task_id in self._tasks:
            raise DuplicateIdError(
                f"Task {task_id} already exists in constellation {self.constellation_id}; use a new task_id"
            )
        if task._owner is not None:
            raise ModificationError(f"Task {task_id} already belongs to a constellation; copy it first")
        self._dag.add_node(task_id, task)
        task._waiting = 0
        self._counts[task._status] += 1
        task._owner = self
        self._refresh(task)

    def guard_task_change(self, task_id: str, verb: str = "modify", done: str = "changed") -> TaskStar:
        """The task, or ModificationError when it may no longer be changed (invariant I3)."""
        task = self._require_task(task_id)
        if not task.is_modifiable:
            raise ModificationError(
                f"Cannot {verb} {task.status.value} task {task_id}: only pending or waiting_dependency "
                f"tasks may be {done}"
            )
        return task

    def remove_task(self, task_id: str) -> None:
        """Remove a pending/waiting task and every line touching it."""
        task = self.guard_task_change(task_id, "remove", "removed")
        for line_id in list(self._dag.in_lines(task_id)) + list(self._dag.out_lines(task_id)):
            self._detach_line(self._lines[line_id])
        self._dag.remove_node(task_id)
        self._unready(task_id)
        self._counts[task.status] -= 1
        task._owner = None
        self._touch()

    def update_task(self, task_id: str, **fields: Any) -> TaskStar:
        """Set descriptive fields (name, description, tips, target_device_id, device_type, priority,
        timeout) through the task's guarded setters; ``task_data`` is merged. All or nothing: a value
        that is refused, or that leaves the task invalid, restores every field."""
        task = self._require_task(task_id)
        unknown = set(fields) - _TASK_FIELDS
        if unknown:
            raise ModificationError(
                f"Unknown task field(s) {sorted(unknown)}; allowed: {sorted(_TASK_FIELDS)}"
            )
        self.guard_task_change(task_id)
        saved = {key: getattr(task, "_" + key) for key in (*fields, "updated")}
        try:
            for key, value in fields.items():
                if key == "task_data":
                    if not isinstance(value, dict):
                        raise ModificationError(f"task_data must be a mapping, got {type(value).__name__}")
                    task.update_task_data(value)
                else:
                    setattr(task, key, value)
            problems = task.get_validation_errors()
            if problems:
                raise ModificationError(f"Invalid update of task {task_id}: {'; '.join(problems)}")
        except (ValueError, TypeError):
            for key, value in saved.items():
                setattr(task, "_" + key, value)
            raise
        self._touch()
        return task

    # ----------------------------------------------------------------- dependencies
    def add_dependency(self, line: TaskStarLine) -> None:
        """Insert a line after checking endpoints, I3, satisfiability and acyclicity (I2)."""
        self._insert_line(line)
        self._touch()

    def add_tasks(self, tasks: Iterable[TaskStar]) -> None:
        """Bulk ``add_task`` (same checks; the state is settled once at the end)."""
        try:
            with gc_paused():
                for task in tasks:
                    self._insert_task(task)
        finally:
            self._touch()

    def add_dependencies(self, lines: Iterable[TaskStarLine]) -> None:
        """Bulk ``add_dependency``: stops at the first refused line, keeping the ones before it."""
        try:
            with gc_paused():
                for line in lines:
                    self._insert_line(line)
        finally:
            self._touch()

    def _insert_line(self, line: TaskStarLine) -> None:
        # Hot path of bulk builds: slot attributes are read directly, statuses are compared by
        # identity (hashing an Enum runs Python code) and the graph is updated through records.
        line_id = line._line_id
        lines = self._lines
        if line_id in lines:
            raise DuplicateIdError(f"Dependency {line_id} already exists; use a new line_id")
        tasks = self._tasks
        source_id, target_id = line._from_task_id, line._to_task_id
        try:
            source = tasks[source_id]
        except KeyError:
            raise TaskNotFoundError(f"Source task {source_id} not found") from None
        try:
            target = tasks[target_id]
        except KeyError:
            raise TaskNotFoundError(f"Target task {target_id} not found") from None
        target_status = target._status
        if target_status is not _PENDING and target_status is not _WAITING:
            raise ModificationError(
                f"Cannot add dependency into {target_status.value} task {target_id}: only pending or "
                "waiting_dependency tasks may gain dependencies"
            )
        source_status = source._status
        source_ended = source_status in _TERMINAL
        if source_ended and not line.outcome_satisfies(source_status, source._result):
            raise UnsatisfiableDependencyError(
                f"Dependency {source_id} -> {target_id} ({line.dependency_type.value}) can "
                f"never be satisfied because {source_id} is {source_status.value}; "
                "use completion_only or drop it"
            )
        self._dag.link(line_id, source_id, source, target_id, target)  # CycleError before any change
        lines[line_id] = line
        line._owner = self
        if source_ended:
            line.evaluate_outcome(source_status, source._result)
            return
        if line._is_satisfied or line.last_evaluation_time is not None:
            line._clear()
        line._blocking = True
        target._waiting += 1
        if target_status is _PENDING:  # first unsatisfied line: PENDING -> WAITING_DEPENDENCY
            self._refresh(target)

    def restore_dependencies(self, lines: Iterable[TaskStarLine]) -> None:
        """Insert lines that reproduce a saved or rebuilt state (loading, merging, a full rebuild).

        Ids, endpoints and acyclicity are checked as for ``add_dependencies``; invariant I3 is not:
        a line into a task that already ran is history, not an edit. Satisfaction follows
        ``_restore_line``. Stops at the first refused line, keeping the ones before it.
        """
        try:
            with gc_paused():
                for line in lines:
                    if line._line_id in self._lines:
                        raise DuplicateIdError(
                            f"Dependency {line._line_id} already exists; use a new line_id"
                        )
                    for end in (line._from_task_id, line._to_task_id):
                        if end not in self._tasks:
                            raise TaskNotFoundError(
                                f"Dependency {line._line_id} references unknown task {end}"
                            )
                    self._restore_line(line)
        finally:
            self._touch()

    def _restore_line(self, line: TaskStarLine) -> None:
        """Insert a saved line (used by ``from_dict`` and merges).

        A line saved as satisfied stays satisfied (``mark_satisfied`` may have forced it). Otherwise
        the saved flag is not trusted: an ended source is evaluated, and a target whose line can
        never be satisfied is cancelled, so a loaded constellation can always finish.
        """
        source, target = self._tasks[line._from_task_id], self._tasks[line._to_task_id]
        self._dag.add_edge(line._line_id, line._from_task_id, line._to_task_id)
        self._lines[line._line_id] = line
        line._owner = self
        if line._is_satisfied:
            return
        # Pure check first: our own saves never need re-stamping, so a round trip stays exact.
        if source.is_terminal and line.outcome_satisfies(source.status, source.result):
            line.evaluate_outcome(source.status, source.result)
            return
        self._add_unsatisfied(target, line)
        if source.is_terminal and target.is_modifiable:
            self._cancel_cascade(target)

    def _detach_line(self, line: TaskStarLine) -> None:
        self._dag.remove_edge(line.line_id, line.from_task_id, line.to_task_id)
        del self._lines[line.line_id]
        line._owner = None
        self._satisfy(self._tasks[line.to_task_id], line)

    def remove_dependency(self, line_id: str) -> bool:
        """Remove a line whose target is modifiable; False when no such line exists."""
        line = self._lines.get(line_id)
        if line is None:
            return False
        self.guard_line_change(line)
        self._detach_line(line)
        self._touch()
        return True

    def update_dependency(self, line_id: str, **fields: Any) -> TaskStarLine:
        """Change ``dependency_type``, ``condition_description``, ``condition_evaluator`` or merge
        ``metadata``; every value is checked before any is applied (all or nothing)."""
        line = self._lines.get(line_id)
        if line is None:
            raise DependencyNotFoundError(
                f"Dependency {line_id} not found in constellation {self.constellation_id}"
            )
        unknown = set(fields) - _LINE_FIELDS
        if unknown:
            raise ModificationError(
                f"Unknown dependency field(s) {sorted(unknown)}; allowed: {sorted(_LINE_FIELDS)}"
            )
        kind = parse_enum(DependencyType, fields.get("dependency_type", line.dependency_type))
        evaluator = fields.get("condition_evaluator", line.condition_evaluator)
        if evaluator is not None and not callable(evaluator):
            raise ModificationError("condition_evaluator must be callable (result -> bool) or None")
        if not isinstance(fields.get("metadata", {}), dict):
            raise ModificationError("metadata must be a mapping")
        description = fields.get("condition_description", line.condition_description)
        if description is not None and not isinstance(description, str):
            raise ModificationError("condition_description must be text")
        semantic = "dependency_type" in fields or "condition_evaluator" in fields
        self.guard_line_change(line, kind if semantic else None, evaluator)
        line._condition_description = description
        if "metadata" in fields:
            line._metadata = {**(line._metadata or {}), **fields["metadata"]}
        if semantic:
            line._dependency_type, line._condition_evaluator = kind, evaluator
            line._changed(reset=True)  # re-evaluates through _on_line_change
        else:
            line._updated = time.time()
            self._touch()
        return line

    def guard_line_change(
        self,
        line: TaskStarLine,
        new_kind: DependencyType | None = None,
        new_evaluator: ConditionEvaluator | None = None,
    ) -> None:
        """Refuse a change of ``line``: ModificationError when its target left pending/waiting (I3);
        with ``new_kind``, UnsatisfiableDependencyError when its ended source could never satisfy the
        changed edge (an edit must not cancel tasks as a side effect)."""
        target = self._tasks[line.to_task_id]
        if not target.is_modifiable:
            raise ModificationError(
                f"Cannot modify dependency {line.line_id}: its target task {target.task_id} is "
                f"{target.status.value}; only dependencies into pending or waiting tasks may change"
            )
        source = self._tasks[line.from_task_id]
        if (
            new_kind is not None
            and source.is_terminal
            and not line.outcome_satisfies(source.status, source.result, new_kind, new_evaluator)
        ):
            raise UnsatisfiableDependencyError(
                f"Dependency {line.line_id} ({source.task_id} -> {target.task_id}) cannot become "
                f"{new_kind.value}: {source.task_id} is {source.status.value}, so it could never be "
                "satisfied; use completion_only or remove the dependency"
            )

    def _on_line_forced(self, line: TaskStarLine) -> None:
        """``mark_satisfied`` / ``reset_satisfaction`` were called: the target's readiness follows."""
        target = self._tasks[line.to_task_id]
        if line._is_satisfied:
            self._satisfy(target, line)
        elif target.is_modifiable:
            self._add_unsatisfied(target, line)

    def _on_line_change(self, line: TaskStarLine) -> None:
        source = self._tasks[line.from_task_id]
        target = self._tasks[line.to_task_id]
        satisfied = source.is_terminal and line.evaluate_outcome(source.status, source.result)
        if satisfied:
            self._satisfy(target, line)
        else:
            self._add_unsatisfied(target, line)
            if source.is_terminal:
                self._cancel_cascade(target)
        self._touch()
