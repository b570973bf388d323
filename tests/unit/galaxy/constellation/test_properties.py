"""Property tests: random edit sequences keep the DAG acyclic and serializable."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from starweave.errors import ConstellationError
from starweave.galaxy.constellation import DependencyType, TaskConstellation, TaskStar, TaskStarLine

N = 12
ops = st.lists(
    st.tuples(
        st.sampled_from(
            ["add_edge", "add_edge", "add_edge", "remove_edge", "remove_task", "add_task", "complete"]
        ),
        st.integers(0, N - 1),
        st.integers(0, N - 1),
        st.sampled_from(list(DependencyType)),
        st.booleans(),
    ),
    max_size=60,
)


def has_path(c: TaskConstellation, start: str, goal: str) -> bool:
    """Independent reachability check over get_all_dependencies (iterative)."""
    succ: dict[str, list[str]] = {}
    for line in c.get_all_dependencies():
        succ.setdefault(line.from_task_id, []).append(line.to_task_id)
    stack, seen = [start], {start}
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for nxt in succ.get(node, []):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def run(sequence: list[tuple[str, int, int, DependencyType, bool]]) -> TaskConstellation:
    c = TaskConstellation("prop")
    c.add_tasks(TaskStar(task_id=f"t{i}", description="x") for i in range(N))
    for op, a, b, kind, flag in sequence:
        src, dst = f"t{a}", f"t{b}"
        if op == "add_edge":
            cycle = src == dst or (c.get_task(src) and c.get_task(dst) and has_path(c, dst, src))
            try:
                c.add_dependency(TaskStarLine(src, dst, kind)) if src != dst else None
                assert not cycle or src == dst, "a cycle-making edge was accepted"
            except ConstellationError as exc:
                assert cycle or "not found" in str(exc) or "Cannot" in str(exc) or "never be" in str(exc)
        elif op == "remove_edge":
            for line in c.get_all_dependencies()[:1]:
                if c.is_dependency_modifiable(line.line_id):
                    c.remove_dependency(line.line_id)
        elif op == "remove_task" and c.is_task_modifiable(src):
            c.remove_task(src)
        elif op == "add_task" and c.get_task(src) is None:
            c.add_task(TaskStar(task_id=src, description="y"))
        elif op == "complete":
            ready = c.get_ready_tasks()
            if ready:
                c.mark_task_completed(ready[0].task_id, flag, "r" if flag else None, None if flag else "e")
    return c


@settings(max_examples=150, deadline=None)
@given(ops)
def test_random_edits_stay_acyclic_and_consistent(
    sequence: list[tuple[str, int, int, DependencyType, bool]],
) -> None:
    c = run(sequence)
    assert c.validate_dag() == (True, [])
    order = c.get_topological_order()
    position = {tid: i for i, tid in enumerate(order)}
    assert sorted(order) == sorted(t.task_id for t in c.get_all_tasks())
    for line in c.get_all_dependencies():
        assert position[line.from_task_id] < position[line.to_task_id]
    # Incremental ready set equals a full recomputation.
    expected = {
        t.task_id
        for t in c.get_all_tasks()
        if t.status.value == "pending" and all(ln.is_satisfied() for ln in c.get_task_dependencies(t.task_id))
    }
    assert {t.task_id for t in c.get_ready_tasks()} == expected


@settings(max_examples=100, deadline=None)
@given(ops)
def test_json_round_trip_is_lossless(sequence: list[tuple[str, int, int, DependencyType, bool]]) -> None:
    c = run(sequence)
    text = c.to_json()
    again = TaskConstellation.from_json(text)
    assert again.to_json() == text
    assert {t.task_id for t in again.get_ready_tasks()} == {t.task_id for t in c.get_ready_tasks()}


@settings(max_examples=100, deadline=None)
@given(ops)
def test_running_to_the_end_always_completes(
    sequence: list[tuple[str, int, int, DependencyType, bool]],
) -> None:
    c = run(sequence)
    for step in range(10 * N):
        ready = c.get_ready_tasks()
        if not ready:
            break
        c.mark_task_completed(ready[0].task_id, step % 3 != 0, "r", "e")
    assert c.is_complete(), {t.task_id: t.status.value for t in c.get_all_tasks()}
