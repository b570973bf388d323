"""Execution state of a TaskConstellation: readiness tracking, status changes and failure propagation.

Kept apart from the editing operations (``constellation.py``) so each class stays small. Readiness
is incremental: each task counts its unsatisfied incoming lines and a ready set changes with every
status change, so ``get_ready_tasks`` never scans the graph. When a task ends, its outgoing lines
are evaluated; a dependent whose line can no longer be satisfied is CANCELLED (iteratively, never
recursively), so ``is_complete()`` always becomes true.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import Any

from starweave.errors import ModificationError, TaskNotFoundError

from .enums import TERMINAL_STATUSES, ConstellationState, TaskStatus
from .queries import ConstellationQueries
from .star_line import TaskStarLine
from .task_star import TaskStar, utc_now

_PENDING = TaskStatus.PENDING
_WAITING = TaskStatus.WAITING_DEPENDENCY


class ConstellationExecution(ConstellationQueries):
    """Mixin of TaskConstellation: readiness bookkeeping and the execution API."""

    constellation_id: str
    updated_at: datetime
    execution_end_time: datetime | None
    _ended: deque[TaskStar]
    _propagating: bool
    _newly_ready: list[TaskStar]

    def _touch(self) -> None:
        self.updated_at = utc_now()
        self.update_state()

    def _require_task(self, task_id: str) -> TaskStar:
        task = self._tasks.get(task_id)
        if task is None:
            raise TaskNotFoundError(f"Task {task_id} not found in constellation {self.constellation_id}")
        return task

    def _add_unsatisfied(self, target: TaskStar, line: TaskStarLine) -> None:
        if not line._blocking:
            line._blocking = True
            target._waiting += 1
        self._refresh(target)

    def _satisfy(self, target: TaskStar, line: TaskStarLine) -> None:
        if line._blocking:
            line._blocking = False
            target._waiting -= 1
        self._refresh(target)

    def _refresh(self, task: TaskStar) -> None:
        """Re-derive PENDING/WAITING_DEPENDENCY and ready-set membership of a task."""
        status, task_id, counts = task._status, task._task_id, self._counts
        if status is not _PENDING and status is not _WAITING:
            self._unready(task_id)
            return
        if task._waiting:
            if status is _PENDING:
                counts[_PENDING] -= 1
                counts[_WAITING] += 1
                task._status = _WAITING
            self._unready(task_id)
            return
        if status is _WAITING:
            counts[_WAITING] -= 1
            counts[_PENDING] += 1
            task._status = _PENDING
        if task_id not in self._ready:
            self._ready[task_id] = None
            if self._propagating:
                self._newly_ready.append(task)

    def _unready(self, task_id: str) -> None:
        if task_id in self._ready:
            del self._ready[task_id]
            self._ready_pops += 1

    def _guard_status_change(self, task: TaskStar, new: TaskStatus) -> None:
        if task.status is TaskStatus.FAILED and new is TaskStatus.PENDING:
            for line_id in self._dag.out_lines(task.task_id):
                dependent = self._tasks[self._lines[line_id].to_task_id]
                if not dependent.is_modifiable:
                    raise ModificationError(
                        f"Cannot retry task {task.task_id}: its dependent {dependent.task_id} is already "
                        f"{dependent.status.value}"
                    )

    def _on_status_change(self, task: TaskStar, old: TaskStatus, new: TaskStatus) -> None:
        self._counts[old] -= 1
        self._counts[new] += 1
        if old in TERMINAL_STATUSES and new is TaskStatus.PENDING:  # retry: re-open outgoing lines
            for line_id, target_id in self._dag.out_lines(task.task_id).items():
                line = self._lines[line_id]
                line._clear()
                self._add_unsatisfied(self._tasks[target_id], line)
        self._refresh(task)
        if new in TERMINAL_STATUSES:
            self._ended.append(task)
            if not self._propagating:
                self._propagate()
        self._touch()

    def _propagate(self) -> None:
        """Evaluate outgoing lines of ended tasks; cancel dependents that can never run (iteratively)."""
        self._propagating = True
        try:
            while self._ended:
                task = self._ended.popleft()
                for line_id, target_id in self._dag.out_lines(task.task_id).items():
                    line = self._lines[line_id]
                    target = self._tasks[target_id]
                    if line.evaluate_outcome(task.status, task.result):
                        self._satisfy(target, line)
                    elif not target.is_terminal:
                        self._cancel_cascade(target)
        finally:
            self._propagating = False

    def _cancel_cascade(self, target: TaskStar) -> None:
        if target.is_terminal:
            return
        target.cancel()  # the listener queues it; _propagate handles its own dependents
        if not self._propagating:
            self._propagate()

    # ----------------------------------------------------------------- execution
    def start_execution(self) -> None:
        """Mark the constellation as executing."""
        self.execution_start_time = utc_now()
        self.state = ConstellationState.EXECUTING
        self.updated_at = self.execution_start_time

    def start_task(self, task_id: str) -> TaskStar:
        """PENDING -> RUNNING for a ready task."""
        task = self._require_task(task_id)
        task.start_execution()
        return task

    def mark_task_completed(
        self, task_id: str, success: bool, result: Any = None, error: Exception | str | None = None
    ) -> list[TaskStar]:
        """End a task (starting it first if still pending); return the tasks that became ready."""
        task = self._require_task(task_id)
        if task.status is TaskStatus.PENDING:
            task.start_execution()
        self._newly_ready = []
        self._propagating = True  # collect readiness changes made by the listener
        try:
            if success:
                task.complete_with_success(result)
            else:
                task.complete_with_failure(error if error is not None else "Task failed")
        finally:
            self._propagating = False
        self._propagate()
        ready = [t for t in self._newly_ready if t.task_id in self._ready]
        self._newly_ready = []
        ready.sort(key=lambda t: -t.priority.value)
        return ready

    def cancel_task(self, task_id: str) -> None:
        """Cancel a non-terminal task; dependents that can no longer run are cancelled too."""
        self._require_task(task_id).cancel()

    def complete_execution(self) -> None:
        """Record the end time and settle the state."""
        self.execution_end_time = utc_now()
        self._touch()
