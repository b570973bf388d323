"""TaskConstellation scale benchmarks against the reference's published costs.

Run: ``.venv/bin/python benchmarks/constellation_bench.py [--skip-million] [--repeat N]``

Each case builds TaskStar / TaskStarLine objects and inserts them one edit at a time through the
public API (cycle check before every insertion); the times include object creation. The
scheduler case runs a 5,000-task random DAG to completion, asking for the ready tasks and
completing the first one each round, and reports the cost per completed task.

Reference figures (issue 4): 5,000-task chain 58 s, 5,000-task fan-out 95 s, 1,000-task chain
built back to front: RecursionError, scheduler overhead 33 ms per task at 5,000 tasks.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine


def _tasks(c: TaskConstellation, n: int) -> None:
    c.add_tasks(TaskStar(task_id=f"t{i}", description="step") for i in range(n))


def chain(n: int, back_to_front: bool = False, bulk: bool = False) -> TaskConstellation:
    """t0 -> t1 -> ... built front to back (or back to front): one add_dependency call per edge,
    or one add_dependencies call for all (same per-edge checks)."""
    c = TaskConstellation()
    _tasks(c, n)
    order = range(n - 1, 0, -1) if back_to_front else range(1, n)
    lines = (TaskStarLine(f"t{i - 1}", f"t{i}", line_id=f"l{i}") for i in order)
    if bulk:
        c.add_dependencies(lines)
    else:
        for line in lines:
            c.add_dependency(line)
    return c


def fan_out(n: int) -> TaskConstellation:
    """One root with n - 1 dependents."""
    c = TaskConstellation()
    _tasks(c, n)
    for i in range(1, n):
        c.add_dependency(TaskStarLine("t0", f"t{i}", line_id=f"l{i}"))
    return c


def random_edges(n: int, edges: int, seed: int = 1, window: int | None = None) -> list[tuple[int, int]]:
    """``edges`` random forward pairs ``(a, b)`` with ``a < b`` (optionally ``b - a <= window``)."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(edges):
        b = rng.randrange(1, n)
        pairs.append((rng.randrange(max(0, b - window) if window else 0, b), b))
    return pairs


def random_dag(n: int, pairs: list[tuple[int, int]]) -> TaskConstellation:
    """n tasks and one line per pair, each created and bulk-added (the pairs are drawn beforehand,
    so the random number generator is not timed)."""
    c = TaskConstellation()
    _tasks(c, n)
    c.add_dependencies(TaskStarLine(f"t{a}", f"t{b}", line_id=f"l{k}") for k, (a, b) in enumerate(pairs))
    return c


def scheduler_ms_per_task(n: int) -> float:
    """Run a random n-task DAG to completion; milliseconds of model overhead per completed task."""
    c = random_dag(n, random_edges(n, 2 * n, seed=2, window=50))
    start = time.perf_counter()
    done = 0
    while True:
        ready = c.get_ready_tasks()
        if not ready:
            break
        c.mark_task_completed(ready[0].task_id, True, "ok")
        done += 1
    elapsed = time.perf_counter() - start
    assert done == n and c.is_complete()
    return elapsed * 1000 / n


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn`` took; its result is freed after the clock stops (freeing is not building)."""
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    del result
    return elapsed


def repeated(fn: Callable[[], object], repeat: int) -> str:
    """Median (and minimum) of ``repeat`` timings: the shared machine is noisy."""
    times = sorted(timed(fn) for _ in range(repeat))
    median = statistics.median(times)
    return f"{median:.3f} s" if repeat == 1 else f"{median:.3f} s (min {times[0]:.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skip-million", action="store_true", help="skip the 1,000,000-task chains")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median reported)")
    args = parser.parse_args()
    rep = max(1, args.repeat)
    pairs = random_edges(100_000, 200_000)
    rows: list[tuple[str, str, str]] = [
        ("5,000-task chain", repeated(lambda: chain(5000), rep), "58 s"),
        ("5,000-task fan-out", repeated(lambda: fan_out(5000), rep), "95 s"),
        ("1,000-task chain, back to front", repeated(lambda: chain(1000, True), rep), "RecursionError"),
        (
            "100,000 tasks / 200,000 edges (bulk)",
            repeated(lambda: random_dag(100_000, pairs), rep),
            "- (target < 2 s)",
        ),
    ]
    if not args.skip_million:
        rows.append(("1,000,000-task chain (bulk)", repeated(lambda: chain(1_000_000, bulk=True), 1), "-"))
        rows.append(
            (
                "1,000,000-task chain, back to front (bulk)",
                repeated(lambda: chain(1_000_000, True, bulk=True), 1),
                "RecursionError at 1,000",
            )
        )
    per_task = sorted(scheduler_ms_per_task(5000) for _ in range(rep))
    rows.append(
        ("scheduler overhead, 5,000 tasks", f"{statistics.median(per_task):.3f} ms/task", "33 ms/task")
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'starweave':>24}  reference")
    for name, ours, ref in rows:
        print(f"{name:<{width}}  {ours:>24}  {ref}")


if __name__ == "__main__":
    main()
