"""TaskStarLine: a typed dependency edge ``from_task_id -> to_task_id``.

Semantics (what the source's outcome must be for the edge to be satisfied):

- UNCONDITIONAL: the source ran to an end, COMPLETED or FAILED ("wait for it"). A CANCELLED
  source never ran, so the edge can never be satisfied.
- SUCCESS_ONLY: the source COMPLETED with a result that is not None.
- COMPLETION_ONLY: the source reached any terminal status, CANCELLED included.
- CONDITIONAL: the source COMPLETED and ``condition_evaluator(result)`` is true; without an
  evaluator it behaves as SUCCESS_ONLY; an evaluator that raises counts as false.

Once the source is terminal an edge is either satisfied or permanently unsatisfiable; the
constellation cancels targets of unsatisfiable edges so execution always finishes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from time import time
from typing import Any, Protocol

from starweave.errors import ConstellationError

from .enums import DependencyType, TaskStatus, parse_enum
from .task_star import UtcTimestamp, utc_now

logger = logging.getLogger(__name__)

ConditionEvaluator = Callable[[Any], bool]


class LineOwner(Protocol):
    """What a line needs from the constellation that holds it."""

    def guard_line_change(
        self,
        line: TaskStarLine,
        new_kind: DependencyType | None = None,
        new_evaluator: ConditionEvaluator | None = None,
    ) -> None: ...

    def _on_line_change(self, line: TaskStarLine) -> None: ...

    def _on_line_forced(self, line: TaskStarLine) -> None: ...


class TaskStarLine:
    """A dependency edge between two tasks, with its type and satisfaction state."""

    __slots__ = (
        "_blocking",
        "_condition_description",
        "_condition_evaluator",
        "_created",
        "_dependency_type",
        "_from_task_id",
        "_is_satisfied",
        "_line_id",
        "_metadata",
        "_owner",
        "_to_task_id",
        "_updated",
        "last_evaluation_result",
        "last_evaluation_time",
    )

    def __init__(
        self,
        from_task_id: str,
        to_task_id: str,
        dependency_type: DependencyType = DependencyType.UNCONDITIONAL,
        condition_description: str | None = None,
        condition_evaluator: ConditionEvaluator | None = None,
        line_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if from_task_id == to_task_id:
            raise ConstellationError(
                f"A task cannot depend on itself ({from_task_id} -> {to_task_id}); remove the self-loop"
            )
        self._line_id = line_id if line_id is not None else str(uuid.uuid4())
        self._from_task_id = from_task_id
        self._to_task_id = to_task_id
        self._dependency_type = (
            dependency_type
            if type(dependency_type) is DependencyType
            else parse_enum(DependencyType, dependency_type)
        )
        self._condition_description = condition_description
        self._condition_evaluator = condition_evaluator
        self._metadata: dict[str, Any] | None = dict(metadata) if metadata else None
        self._is_satisfied = False
        # True while counted in its target's unsatisfied-line count (maintained by the owner).
        self._blocking = False
        self.last_evaluation_result: bool | None = None
        self.last_evaluation_time: datetime | None = None
        self._created = self._updated = time()
        # The owning constellation refuses changes (I3) and re-evaluates after them.
        self._owner: LineOwner | None = None

    created_at = UtcTimestamp("_created")
    """Creation time (UTC)."""
    updated_at = UtcTimestamp("_updated")
    """Last change time (UTC)."""

    # ----------------------------------------------------------------- factories
    @classmethod
    def create_unconditional(
        cls, from_task_id: str, to_task_id: str, description: str = "Unconditional dependency"
    ) -> TaskStarLine:
        """An UNCONDITIONAL edge."""
        return cls(from_task_id, to_task_id, DependencyType.UNCONDITIONAL, description)

    @classmethod
    def create_success_only(
        cls, from_task_id: str, to_task_id: str, description: str = "Success-only dependency"
    ) -> TaskStarLine:
        """A SUCCESS_ONLY edge."""
        return cls(from_task_id, to_task_id, DependencyType.SUCCESS_ONLY, description)

    @classmethod
    def create_conditional(
        cls,
        from_task_id: str,
        to_task_id: str,
        condition_description: str,
        condition_evaluator: ConditionEvaluator | None = None,
    ) -> TaskStarLine:
        """A CONDITIONAL edge."""
        return cls(
            from_task_id, to_task_id, DependencyType.CONDITIONAL, condition_description, condition_evaluator
        )

    # ----------------------------------------------------------------- properties
    @property
    def line_id(self) -> str:
        """Unique id of the edge."""
        return self._line_id

    @property
    def from_task_id(self) -> str:
        """Prerequisite task id."""
        return self._from_task_id

    @property
    def to_task_id(self) -> str:
        """Dependent task id."""
        return self._to_task_id

    @property
    def source_task_id(self) -> str:
        """Alias of ``from_task_id``."""
        return self._from_task_id

    @property
    def target_task_id(self) -> str:
        """Alias of ``to_task_id``."""
        return self._to_task_id

    @property
    def metadata(self) -> dict[str, Any]:
        """Free-form metadata (a copy)."""
        return dict(self._metadata) if self._metadata else {}

    @property
    def condition_evaluator(self) -> ConditionEvaluator | None:
        """The CONDITIONAL predicate, if any (never serialized)."""
        return self._condition_evaluator

    def _change(
        self, new_kind: DependencyType | None = None, new_evaluator: ConditionEvaluator | None = None
    ) -> None:
        # The owner refuses the change (I3, or an edge its ended source could never satisfy).
        if self._owner is not None:
            self._owner.guard_line_change(self, new_kind, new_evaluator)

    def _changed(self, reset: bool) -> None:
        if reset:
            self._is_satisfied = False
            self.last_evaluation_result = None
            self.last_evaluation_time = None
        self._updated = time()
        if self._owner is not None:
            self._owner._on_line_change(self)

    @property
    def dependency_type(self) -> DependencyType:
        """Kind of the edge; changing it resets satisfaction."""
        return self._dependency_type

    @dependency_type.setter
    def dependency_type(self, value: DependencyType) -> None:
        value = parse_enum(DependencyType, value)
        self._change(value, self._condition_evaluator)
        self._dependency_type = value
        self._changed(reset=True)

    @property
    def condition_description(self) -> str | None:
        """Human description of the condition."""
        return self._condition_description

    @condition_description.setter
    def condition_description(self, value: str | None) -> None:
        self._change()
        self._condition_description = value
        self._changed(reset=False)

    def set_condition_evaluator(self, evaluator: ConditionEvaluator | None) -> None:
        """Replace the CONDITIONAL predicate; resets satisfaction."""
        self._change(self._dependency_type, evaluator)
        self._condition_evaluator = evaluator
        self._changed(reset=True)

    # ----------------------------------------------------------------- satisfaction
    def is_satisfied(self, completed_tasks: list[str] | set[str] | None = None) -> bool:
        """With ``completed_tasks``: whether the source is among them; otherwise the recorded state."""
        if completed_tasks is not None:
            return self._from_task_id in completed_tasks
        return self._is_satisfied

    def mark_satisfied(self) -> None:
        """Force the edge to satisfied (its target's readiness follows)."""
        self._is_satisfied = True
        self._updated = time()
        if self._owner is not None:
            self._owner._on_line_forced(self)

    def reset_satisfaction(self) -> None:
        """Forget any evaluation (its target waits for the edge again)."""
        self._clear()
        if self._owner is not None:
            self._owner._on_line_forced(self)

    def _clear(self) -> None:
        self._is_satisfied = False
        self.last_evaluation_result = None
        self.last_evaluation_time = None
        self._updated = time()

    def outcome_satisfies(
        self,
        status: TaskStatus,
        result: Any,
        kind: DependencyType | None = None,
        evaluator: ConditionEvaluator | None = None,
    ) -> bool:
        """Whether a source that ended with ``status`` (and ``result``) satisfies this edge, or the
        edge it would be with ``kind`` and ``evaluator`` (used to refuse an update before it applies)."""
        if kind is None:
            kind, evaluator = self._dependency_type, self._condition_evaluator
        if kind is DependencyType.COMPLETION_ONLY:
            return status in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)
        if kind is DependencyType.UNCONDITIONAL:
            return status in (TaskStatus.COMPLETED, TaskStatus.FAILED)
        if status is not TaskStatus.COMPLETED:
            return False
        if kind is DependencyType.SUCCESS_ONLY or evaluator is None:
            return result is not None
        try:
            return bool(evaluator(result))
        except Exception as exc:
            logger.warning("Condition evaluator of line %s raised %r; treating as false", self._line_id, exc)
            return False

    def evaluate_outcome(self, status: TaskStatus, result: Any) -> bool:
        """Evaluate against a terminal source outcome and record the answer."""
        answer = self.outcome_satisfies(status, result)
        self._is_satisfied = answer
        self.last_evaluation_result = answer
        self.last_evaluation_time = utc_now()
        return answer

    def evaluate_condition(self, prerequisite_result: Any = None) -> bool:
        """Reference API: evaluate assuming the source COMPLETED with ``prerequisite_result``."""
        return self.evaluate_outcome(TaskStatus.COMPLETED, prerequisite_result)

    def to_dict(self) -> dict[str, Any]:
        """The reference's dictionary form (see ``serialization``)."""
        from .serialization import line_to_dict

        return line_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskStarLine:
        """Rebuild from ``to_dict()`` output (lenient about enum spellings)."""
        from .serialization import line_from_dict

        return line_from_dict(data)

    def __repr__(self) -> str:
        return (
            f"TaskStarLine({self._from_task_id!r} -> {self._to_task_id!r}, "
            f"{self._dependency_type.value}, id={self._line_id!r})"
        )
