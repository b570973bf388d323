"""TaskConstellation: edits, invariants I1-I3, readiness, failure propagation, states, metrics."""

from __future__ import annotations

import pytest

from starweave.errors import (
    CycleError,
    DependencyNotFoundError,
    DuplicateIdError,
    ModificationError,
    TaskNotFoundError,
    UnsatisfiableDependencyError,
)
from starweave.galaxy.constellation import (
    ConstellationState,
    DependencyType,
    TaskConstellation,
    TaskPriority,
    TaskStar,
    TaskStarLine,
    TaskStatus,
)


def make(
    *ids: str, edges: list[tuple[str, str]] | None = None, kind: DependencyType = DependencyType.UNCONDITIONAL
) -> TaskConstellation:
    c = TaskConstellation("c1")
    for tid in ids:
        c.add_task(TaskStar(task_id=tid, description=f"do {tid}"))
    for a, b in edges or []:
        c.add_dependency(TaskStarLine(a, b, kind, line_id=f"{a}->{b}"))
    return c


def status(c: TaskConstellation) -> dict[str, str]:
    return {t.task_id: t.status.value for t in c.get_all_tasks()}


def test_defaults_and_states() -> None:
    c = TaskConstellation()
    assert c.constellation_id.startswith("constellation_") and c.name == c.constellation_id
    assert c.state is ConstellationState.CREATED and c.is_complete()
    c.add_task(TaskStar(task_id="a", description="x"))
    assert c.state is ConstellationState.READY and not c.is_complete()
    c.start_task("a")
    assert c.state is ConstellationState.EXECUTING
    c.mark_task_completed("a", True, "ok")
    assert c.state is ConstellationState.COMPLETED and c.is_complete()


def test_add_errors() -> None:
    c = make("a", "b", edges=[("a", "b")])
    with pytest.raises(DuplicateIdError, match="Task a already exists"):
        c.add_task(TaskStar(task_id="a", description="x"))
    with pytest.raises(TaskNotFoundError, match="Source task zz not found"):
        c.add_dependency(TaskStarLine("zz", "a"))
    with pytest.raises(TaskNotFoundError, match="Target task zz not found"):
        c.add_dependency(TaskStarLine("a", "zz"))
    with pytest.raises(DuplicateIdError, match="Dependency a->b already exists"):
        c.add_dependency(TaskStarLine("a", "b", line_id="a->b"))


def test_cycle_rejected_before_insertion() -> None:
    c = make("a", "b", "c", edges=[("a", "b"), ("b", "c")])
    before = c.to_dict()
    with pytest.raises(CycleError, match="Adding dependency c -> a would create a cycle"):
        c.add_dependency(TaskStarLine("c", "a"))
    assert c.to_dict() == before
    assert c.validate_dag() == (True, [])
    assert c.get_topological_order() == ["a", "b", "c"]


def test_readiness_and_priority_order() -> None:
    c = make("root", "low", "high", edges=[("root", "low"), ("root", "high")])
    c.update_task("high", priority=TaskPriority.HIGH)
    c.update_task("low", priority=TaskPriority.LOW)
    assert [t.task_id for t in c.get_ready_tasks()] == ["root"]
    assert c.get_task("low").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
    newly = c.mark_task_completed("root", True, "r")
    assert [t.task_id for t in newly] == ["high", "low"]
    assert [t.task_id for t in c.get_ready_tasks()] == ["high", "low"]


def test_failure_cancels_success_only_dependents_transitively() -> None:
    c = make("a", "b", "c", "d", edges=[("a", "b"), ("b", "c")], kind=DependencyType.SUCCESS_ONLY)
    c.add_dependency(TaskStarLine("b", "d", DependencyType.COMPLETION_ONLY))
    c.mark_task_completed("a", False, error="boom")
    assert status(c) == {"a": "failed", "b": "cancelled", "c": "cancelled", "d": "pending"}
    assert [t.task_id for t in c.get_ready_tasks()] == ["d"]
    c.mark_task_completed("d", True, 1)
    assert c.is_complete() and c.state is ConstellationState.PARTIALLY_FAILED


def test_unconditional_runs_after_failure_but_not_after_cancel() -> None:
    c = make("a", "b", "x", "y", edges=[("a", "b"), ("x", "y")])
    newly = c.mark_task_completed("a", False, error="e")
    assert [t.task_id for t in newly] == ["b"]
    c.cancel_task("x")
    assert status(c)["y"] == "cancelled"


def test_conditional_edge_uses_evaluator() -> None:
    c = make("a", "b", "c")
    c.add_dependency(TaskStarLine.create_conditional("a", "b", "big", lambda r: r > 10))
    c.add_dependency(TaskStarLine.create_conditional("a", "c", "small", lambda r: r <= 10))
    c.mark_task_completed("a", True, 42)
    assert status(c) == {"a": "completed", "b": "pending", "c": "cancelled"}


def test_success_only_with_none_result_cancels() -> None:
    c = make("a", "b", edges=[("a", "b")], kind=DependencyType.SUCCESS_ONLY)
    c.mark_task_completed("a", True, None)
    assert status(c)["b"] == "cancelled" and c.is_complete()


def test_i3_task_and_dependency_modifiability() -> None:
    c = make("a", "b", "c", edges=[("a", "b")])
    c.start_task("a")
    assert not c.is_task_modifiable("a") and c.is_task_modifiable("b")
    with pytest.raises(ModificationError, match="Cannot remove running task a"):
        c.remove_task("a")
    with pytest.raises(ModificationError, match="Cannot modify running task a"):
        c.update_task("a", name="n")
    with pytest.raises(ModificationError, match="Cannot add dependency into running task a"):
        c.add_dependency(TaskStarLine("c", "a"))
    assert c.is_dependency_modifiable("a->b")
    c.mark_task_completed("a", True, 1)
    c.start_task("b")
    assert not c.is_dependency_modifiable("a->b")
    with pytest.raises(ModificationError, match="its target task b is running"):
        c.remove_dependency("a->b")
    with pytest.raises(ModificationError, match="its target task b is running"):
        c.update_dependency("a->b", dependency_type=DependencyType.SUCCESS_ONLY)
    line = c.get_dependency("a->b")
    assert line is not None
    with pytest.raises(ModificationError):
        line.dependency_type = DependencyType.SUCCESS_ONLY
    assert [t.task_id for t in c.get_modifiable_tasks()] == ["c"]
    assert c.get_modifiable_dependencies() == []


def test_remove_task_cascades_and_frees_dependents() -> None:
    c = make("a", "b", "c", edges=[("a", "b"), ("b", "c")])
    c.remove_task("b")
    assert c.dependency_count == 0
    assert {t.task_id for t in c.get_ready_tasks()} == {"a", "c"}
    with pytest.raises(TaskNotFoundError, match="Task b not found"):
        c.remove_task("b")
    assert c.remove_dependency("missing") is False
    with pytest.raises(DependencyNotFoundError, match="Dependency missing not found"):
        c.update_dependency("missing", condition_description="x")


def test_dependency_from_ended_source() -> None:
    c = make("a", "b", "c")
    c.mark_task_completed("a", False, error="e")
    with pytest.raises(UnsatisfiableDependencyError, match="can never be satisfied because a is failed"):
        c.add_dependency(TaskStarLine.create_success_only("a", "b"))
    c.add_dependency(TaskStarLine("a", "b", DependencyType.COMPLETION_ONLY))
    assert [t.task_id for t in c.get_ready_tasks()] == ["b", "c"]


def test_update_dependency_type_reevaluates() -> None:
    c = make("a", "b", "c", edges=[("a", "b"), ("c", "b")])
    c.mark_task_completed("a", False, error="e")
    assert c.get_task("b").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
    before = c.to_json()
    # An edit never cancels as a side effect: an edge its failed source can never satisfy is refused.
    with pytest.raises(UnsatisfiableDependencyError, match="cannot become success_only: a is failed"):
        c.update_dependency("a->b", dependency_type=DependencyType.SUCCESS_ONLY)
    line = c.get_dependency("a->b")
    assert line is not None
    with pytest.raises(UnsatisfiableDependencyError):
        line.dependency_type = DependencyType.CONDITIONAL  # the line's own setter is guarded too
    assert c.to_json() == before
    c.update_dependency("a->b", dependency_type="completion_only", condition_description="after a")
    assert line.dependency_type is DependencyType.COMPLETION_ONLY and line.is_satisfied()
    c.mark_task_completed("c", True, "ok")
    assert status(c)["b"] == "pending"


def test_updates_are_all_or_nothing_and_enum_strings_are_parsed() -> None:
    c = make("a", "b", edges=[("a", "b")])
    before = c.to_json()
    with pytest.raises(ModificationError, match="task_data must be a mapping"):
        c.update_task("a", name="changed", task_data=5)
    with pytest.raises(ModificationError, match="Timeout must be a positive number"):
        c.update_task("a", name="changed", timeout=-1)
    with pytest.raises(ValueError, match="Invalid TaskPriority"):
        c.update_task("a", name="changed", priority="urgent")
    with pytest.raises(ModificationError, match="metadata must be a mapping"):
        c.update_dependency("a->b", dependency_type=DependencyType.COMPLETION_ONLY, metadata=5)
    assert c.to_json() == before
    c.update_task("a", priority=3, device_type="WINDOWS")
    a = c.get_task("a")
    assert a is not None and a.priority is TaskPriority.HIGH and a.device_type is not None
    assert a.device_type.value == "windows"
    c.update_dependency("a->b", dependency_type="success_only")
    assert c.get_dependency("a->b").dependency_type is DependencyType.SUCCESS_ONLY  # type: ignore[union-attr]
    line = TaskStarLine("a", "b", "Completion_Only")  # type: ignore[arg-type]
    assert line.dependency_type is DependencyType.COMPLETION_ONLY
    assert TaskStar(task_id="p", description="d", priority=4).priority is TaskPriority.CRITICAL  # type: ignore[arg-type]
    c.to_json()  # still serialisable


def test_forced_satisfaction_drives_readiness_and_survives_round_trip() -> None:
    c = make("a", "b", edges=[("a", "b")])
    line = c.get_dependency("a->b")
    assert line is not None
    line.mark_satisfied()
    assert [t.task_id for t in c.get_ready_tasks()] == ["a", "b"]
    again = TaskConstellation.from_json(c.to_json())
    assert [t.task_id for t in again.get_ready_tasks()] == ["a", "b"]
    line.reset_satisfaction()
    assert [t.task_id for t in c.get_ready_tasks()] == ["a"]
    again = TaskConstellation.from_json(c.to_json())
    assert [t.task_id for t in again.get_ready_tasks()] == ["a"]


def test_loading_evaluates_lines_from_ended_sources() -> None:
    tasks = {
        "a": {"task_id": "a", "description": "d", "status": "completed", "result": 1},
        "f": {"task_id": "f", "description": "d", "status": "failed", "error": "boom"},
        "b": {"task_id": "b", "description": "d"},
        "s": {"task_id": "s", "description": "d"},
        "t": {"task_id": "t", "description": "d"},
    }
    deps = {
        "l1": {"line_id": "l1", "from_task_id": "a", "to_task_id": "b"},  # is_satisfied not saved
        "l2": {"line_id": "l2", "from_task_id": "f", "to_task_id": "s", "dependency_type": "success_only"},
        "l3": {"line_id": "l3", "from_task_id": "s", "to_task_id": "t"},
    }
    c = TaskConstellation.from_dict({"tasks": tasks, "dependencies": deps})
    assert status(c) == {"a": "completed", "f": "failed", "b": "pending", "s": "cancelled", "t": "cancelled"}
    assert c.is_complete() is False and [t.task_id for t in c.get_ready_tasks()] == ["b"]
    c.mark_task_completed("b", True, "ok")
    assert c.is_complete()


def test_retry_reopens_outgoing_lines() -> None:
    c = TaskConstellation()
    c.add_task(TaskStar(task_id="a", description="x", retry_count=1))
    c.add_task(TaskStar(task_id="b", description="x"))
    c.add_dependency(TaskStarLine("a", "b", line_id="l"))
    c.mark_task_completed("a", False, error="e")
    assert c.get_task("b").status is TaskStatus.PENDING  # type: ignore[union-attr]
    c.get_task("a").retry()  # type: ignore[union-attr]
    assert c.get_task("b").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
    assert [t.task_id for t in c.get_ready_tasks()] == ["a"]


def test_metrics_node_count_and_actual_time() -> None:
    c = make("a", "b", "c", "d", edges=[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    assert c.get_longest_path() == (3, ["a", "b", "d"])
    assert c.get_max_width() == 2
    m = c.get_parallelism_metrics()
    assert m["calculation_mode"] == "node_count"
    assert m["critical_path_length"] == 3 and m["total_work"] == 4
    assert m["parallelism_ratio"] == pytest.approx(4 / 3)
    for tid in c.get_topological_order():
        c.mark_task_completed(tid, True, tid)
    m = c.get_parallelism_metrics()
    assert m["calculation_mode"] == "actual_time"
    assert m["total_work"] == pytest.approx(c.get_total_work())
    assert m["critical_path_length"] <= m["total_work"]
    stats = c.get_statistics()
    assert stats["task_status_counts"] == {"completed": 4}
    assert stats["longest_path_length"] == 3 and stats["parallelism_calculation_mode"] == "actual_time"


def test_chain_ratio_is_one_and_empty_mode() -> None:
    assert TaskConstellation().get_parallelism_metrics()["calculation_mode"] == "empty"
    c = make("a", "b", "c", edges=[("a", "b"), ("b", "c")])
    assert c.get_parallelism_metrics()["parallelism_ratio"] == 1.0


def test_constellation_state_failed_and_cancelled() -> None:
    c = make("a")
    c.mark_task_completed("a", False, error="e")
    assert c.state is ConstellationState.FAILED
    c2 = make("a")
    c2.cancel_task("a")
    assert c2.state is ConstellationState.CANCELLED


@pytest.mark.parametrize("back_to_front", [False, True])
def test_long_chain_without_recursion(back_to_front: bool) -> None:
    n = 20_000  # far beyond the default recursion limit
    c = TaskConstellation()
    c.add_tasks(TaskStar(task_id=str(i), description="x") for i in range(n))
    order = range(n - 1, 0, -1) if back_to_front else range(1, n)
    c.add_dependencies(TaskStarLine(str(i - 1), str(i), line_id=f"l{i}") for i in order)
    assert c.get_topological_order() == [str(i) for i in range(n)]
    assert c.get_longest_path()[0] == n
    with pytest.raises(CycleError):
        c.add_dependency(TaskStarLine(str(n - 1), "0"))
    c.mark_task_completed("0", False, error="e")
    assert c.is_complete() is False  # unconditional: 1 becomes ready
    c2 = TaskConstellation()
    c2.add_tasks(TaskStar(task_id=str(i), description="x") for i in range(n))
    c2.add_dependencies(TaskStarLine.create_success_only(str(i - 1), str(i)) for i in range(1, n))
    c2.mark_task_completed("0", False, error="e")
    assert c2.is_complete() and c2.status_counts()[TaskStatus.CANCELLED] == n - 1


def _unsatisfied(c: TaskConstellation, task_id: str) -> set[str]:
    return {line.line_id for line in c.get_task_dependencies(task_id) if not line.is_satisfied()}


def test_unsatisfied_dependencies_follow_every_change() -> None:
    c = make("a", "b", "c", edges=[("a", "c"), ("b", "c")])
    c_task = c.get_task("c")
    assert c_task is not None and _unsatisfied(c, "c") == {"a->c", "b->c"}
    assert c_task.status is TaskStatus.WAITING_DEPENDENCY
    c.update_dependency("a->c", dependency_type=DependencyType.COMPLETION_ONLY)  # re-typed: still one
    assert _unsatisfied(c, "c") == {"a->c", "b->c"} and c_task.status is TaskStatus.WAITING_DEPENDENCY
    c.mark_task_completed("a", True, "x")
    assert _unsatisfied(c, "c") == {"b->c"} and c_task.status is TaskStatus.WAITING_DEPENDENCY
    assert c_task not in c.get_ready_tasks()
    c.remove_dependency("b->c")
    assert _unsatisfied(c, "c") == set() and c_task.status is TaskStatus.PENDING
    assert c.get_ready_tasks()[-1] is c_task
    free = TaskConstellation()
    free.add_task(TaskStar(task_id="free", description="x"))
    assert _unsatisfied(free, "free") == set() and free.get_ready_tasks()[0].task_id == "free"


def test_removed_task_can_join_another_constellation_and_graph_rejects_linked_nodes() -> None:
    c = make("a", "b", edges=[("a", "b")])
    b = c.get_task("b")
    assert b is not None
    c.remove_task("b")
    other = TaskConstellation("c2")
    other.add_task(b)  # its adjacency was emptied by the removal
    assert b.status is TaskStatus.PENDING and other.get_ready_tasks() == [b]
    a = c.get_task("a")
    assert a is not None
    c.add_task(TaskStar(task_id="z", description="z"))
    c.add_dependency(TaskStarLine("a", "z", line_id="a->z"))
    with pytest.raises(ValueError, match="still has edges"):
        other.dag.add_node("a", a)


def test_timestamps_are_utc_and_naive_values_are_taken_as_utc() -> None:
    from datetime import UTC, datetime

    task = TaskStar(task_id="a", description="x")
    assert task.created_at.tzinfo is UTC and task.created_at <= datetime.now(UTC)
    task.created_at = datetime(2025, 1, 2, 3, 4, 5, 678901)
    assert task.created_at == datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    line = TaskStarLine("a", "b")
    line.updated_at = datetime(2025, 1, 2, 3, 4, 5, 1, tzinfo=UTC)
    assert line.updated_at.isoformat() == "2025-01-02T03:04:05.000001+00:00"
