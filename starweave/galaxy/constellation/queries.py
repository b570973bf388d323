"""Read-only queries of a TaskConstellation (kept apart to keep the core class small)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from starweave.errors import CycleError, TaskNotFoundError

from .enums import MODIFIABLE_STATUSES, TERMINAL_STATUSES, ConstellationState, TaskStatus
from .graph import DagIndex
from .star_line import TaskStarLine
from .task_star import TaskStar

if TYPE_CHECKING:
    from .constellation import TaskConstellation


class ConstellationQueries:
    """Mixin: listing, readiness and validation queries."""

    _tasks: dict[str, TaskStar]
    _lines: dict[str, TaskStarLine]
    _dag: DagIndex
    _ready: dict[str, None]
    _ready_pops: int
    _counts: dict[TaskStatus, int]
    state: ConstellationState
    execution_start_time: datetime | None

    def is_complete(self) -> bool:
        """True when every task is terminal (an empty constellation is complete)."""
        return sum(self._counts[s] for s in TERMINAL_STATUSES) == len(self._tasks)

    def update_state(self) -> None:
        """Derive the aggregate state from the status counts (O(1))."""
        counts, total = self._counts, len(self._tasks)
        done, failed, cancelled = (
            counts[TaskStatus.COMPLETED],
            counts[TaskStatus.FAILED],
            counts[TaskStatus.CANCELLED],
        )
        if total == 0:
            self.state = ConstellationState.CREATED
        elif done + failed + cancelled == total:
            if done == total:
                self.state = ConstellationState.COMPLETED
            elif done > 0:
                self.state = ConstellationState.PARTIALLY_FAILED
            elif failed > 0:
                self.state = ConstellationState.FAILED
            else:
                self.state = ConstellationState.CANCELLED
        elif counts[TaskStatus.RUNNING] + done + failed + cancelled > 0 or self.execution_start_time:
            self.state = ConstellationState.EXECUTING
        else:
            self.state = ConstellationState.READY

    def get_all_tasks(self) -> list[TaskStar]:
        """Every task in insertion order."""
        return list(self._tasks.values())

    def get_task(self, task_id: str) -> TaskStar | None:
        """The task, or None."""
        return self._tasks.get(task_id)

    def is_task_modifiable(self, task_id: str) -> bool:
        """True when the task exists and is pending or waiting (I3)."""
        task = self._tasks.get(task_id)
        return task is not None and task.is_modifiable

    def get_dependency(self, line_id: str) -> TaskStarLine | None:
        """The line, or None."""
        return self._lines.get(line_id)

    def get_all_dependencies(self) -> list[TaskStarLine]:
        """Every line."""
        return list(self._lines.values())

    def get_task_dependencies(self, task_id: str) -> list[TaskStarLine]:
        """Incoming lines of a task."""
        if task_id not in self._tasks:
            raise TaskNotFoundError(f"Task {task_id} not found")
        return [self._lines[lid] for lid in self._dag.in_lines(task_id)]

    def is_dependency_modifiable(self, line_id: str) -> bool:
        """True when the line exists and its target is pending or waiting (I3)."""
        line = self._lines.get(line_id)
        return line is not None and self._tasks[line.to_task_id].is_modifiable

    def get_ready_tasks(self) -> list[TaskStar]:
        """Pending tasks with every dependency satisfied, highest priority first (no graph scan)."""
        if self._ready_pops > 2 * len(self._ready) + 1024:
            # A dict keeps the slots of deleted keys until it is rebuilt; after many tasks passed
            # through the ready set, iterating it would cost the history, not the content.
            self._ready = dict(self._ready)
            self._ready_pops = 0
        ready = [self._tasks[tid] for tid in self._ready]
        ready.sort(key=lambda t: -t.priority.value)
        return ready

    def _with_status(self, *statuses: TaskStatus) -> list[TaskStar]:
        return [t for t in self._tasks.values() if t.status in statuses]

    def get_running_tasks(self) -> list[TaskStar]:
        """Tasks in RUNNING."""
        return self._with_status(TaskStatus.RUNNING)

    def get_completed_tasks(self) -> list[TaskStar]:
        """Tasks in COMPLETED."""
        return self._with_status(TaskStatus.COMPLETED)

    def get_failed_tasks(self) -> list[TaskStar]:
        """Tasks in FAILED."""
        return self._with_status(TaskStatus.FAILED)

    def get_modifiable_tasks(self) -> list[TaskStar]:
        """Tasks that may still be edited (I3)."""
        return self._with_status(*MODIFIABLE_STATUSES)

    def get_modifiable_dependencies(self) -> list[TaskStarLine]:
        """Lines whose target may still be edited (I3)."""
        return [ln for ln in self._lines.values() if self._tasks[ln.to_task_id].is_modifiable]

    def validate_dag(self) -> tuple[bool, list[str]]:
        """Check acyclicity and endpoint existence; returns ``(ok, errors)``."""
        errors: list[str] = []
        if self._dag.has_cycle():
            errors.append("DAG contains cycles")
        for line in self._lines.values():
            if line.from_task_id not in self._tasks:
                errors.append(f"Dependency references non-existent source task {line.from_task_id}")
            if line.to_task_id not in self._tasks:
                errors.append(f"Dependency references non-existent target task {line.to_task_id}")
        return not errors, errors

    def has_cycle(self) -> bool:
        """True when the graph has a cycle (never, given I2; kept for the reference API)."""
        return self._dag.has_cycle()

    def get_topological_order(self) -> list[str]:
        """Task ids in a Kahn topological order; ValueError (CycleError) on a cycle."""
        try:
            return self._dag.topological_order()
        except CycleError as exc:
            raise CycleError("Cannot compute topological order: DAG contains cycles") from exc


def task_status_counts(constellation: TaskConstellation) -> dict[str, int]:
    """``{status value: count}`` for statuses that occur."""
    return {s.value: n for s, n in constellation.status_counts().items() if n}
