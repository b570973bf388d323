"""TaskStarLine: the four dependency types and satisfaction bookkeeping."""

from __future__ import annotations

import pytest

from starweave.errors import ConstellationError
from starweave.galaxy.constellation import DependencyType, TaskStarLine, TaskStatus

OUTCOMES = [
    (TaskStatus.COMPLETED, "r"),
    (TaskStatus.COMPLETED, None),
    (TaskStatus.FAILED, None),
    (TaskStatus.CANCELLED, None),
]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (DependencyType.UNCONDITIONAL, [True, True, True, False]),
        (DependencyType.SUCCESS_ONLY, [True, False, False, False]),
        (DependencyType.COMPLETION_ONLY, [True, True, True, True]),
        (DependencyType.CONDITIONAL, [True, False, False, False]),  # no evaluator: success-only
    ],
)
def test_semantics(kind: DependencyType, expected: list[bool]) -> None:
    line = TaskStarLine("a", "b", kind)
    assert [line.outcome_satisfies(status, result) for status, result in OUTCOMES] == expected


def test_conditional_evaluator_and_exceptions() -> None:
    line = TaskStarLine.create_conditional("a", "b", "result > 3", lambda r: r > 3)
    assert line.evaluate_condition(5) and line.is_satisfied()
    assert not line.evaluate_condition(1) and not line.is_satisfied()
    assert line.last_evaluation_result is False and line.last_evaluation_time is not None
    line.set_condition_evaluator(lambda r: bool(1 / 0))
    assert not line.evaluate_condition(5)
    assert not line.outcome_satisfies(TaskStatus.FAILED, 10)


def test_type_change_resets_satisfaction() -> None:
    line = TaskStarLine.create_unconditional("a", "b")
    line.mark_satisfied()
    assert line.is_satisfied()
    line.dependency_type = DependencyType.SUCCESS_ONLY
    assert not line.is_satisfied()
    assert line.is_satisfied(["a"]) and not line.is_satisfied(["c"])


def test_self_loop_rejected_and_aliases() -> None:
    with pytest.raises(ConstellationError, match="cannot depend on itself"):
        TaskStarLine("a", "a")
    line = TaskStarLine.create_success_only("a", "b")
    assert (line.source_task_id, line.target_task_id) == ("a", "b")
    assert line.condition_description == "Success-only dependency"


def test_dict_round_trip() -> None:
    line = TaskStarLine("a", "b", DependencyType.COMPLETION_ONLY, "c", metadata={"m": 1})
    line.evaluate_condition(None)
    assert TaskStarLine.from_dict(line.to_dict()).to_dict() == line.to_dict()
