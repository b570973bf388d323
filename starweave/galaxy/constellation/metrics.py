"""Structure and parallelism metrics of a constellation.

L is the longest root-to-leaf path, W the total work and P = W / L. In ``node_count`` mode (some
task is not terminal) every task weighs 1; in ``actual_time`` mode (all terminal) a task weighs its
execution duration in seconds (0 when it never ran). MaxWidth is the largest number of tasks on
one depth level (depth = 1 + deepest predecessor).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console

    from .constellation import TaskConstellation


def get_longest_path(c: TaskConstellation) -> tuple[int, list[str]]:
    """Number of tasks on the longest path, and the path."""
    length, path = c.dag.heaviest_path(lambda _n: 1.0)
    return int(length), path


def _duration(c: TaskConstellation, task_id: str) -> float:
    task = c.get_task(task_id)
    duration = task.execution_duration if task is not None else None
    return duration or 0.0


def get_critical_path_length_with_time(c: TaskConstellation) -> tuple[float, list[str]]:
    """Longest path by execution time (seconds) and that path."""
    return c.dag.heaviest_path(lambda n: _duration(c, n))


def get_max_width(c: TaskConstellation) -> int:
    """Most tasks sharing one depth level."""
    levels = c.dag.levels()
    return max(Counter(levels.values()).values(), default=0)


def get_total_work(c: TaskConstellation) -> float:
    """Sum of execution durations in seconds."""
    return sum(_duration(c, t.task_id) for t in c.get_all_tasks())


def get_parallelism_metrics(c: TaskConstellation) -> dict[str, Any]:
    """``{critical_path_length, total_work, parallelism_ratio, critical_path_tasks, calculation_mode}``."""
    if c.task_count == 0:
        return {
            "critical_path_length": 0,
            "total_work": 0,
            "parallelism_ratio": 0.0,
            "critical_path_tasks": [],
            "calculation_mode": "empty",
        }
    length: float
    work: float
    if c.is_complete():
        mode = "actual_time"
        length, path = get_critical_path_length_with_time(c)
        work = get_total_work(c)
    else:
        mode = "node_count"
        node_length, path = get_longest_path(c)
        length, work = node_length, c.task_count
    return {
        "critical_path_length": length,
        "total_work": work,
        "parallelism_ratio": work / length if length > 0 else 0.0,
        "critical_path_tasks": path,
        "calculation_mode": mode,
    }


def get_statistics(c: TaskConstellation) -> dict[str, Any]:
    """The reference's statistics dictionary."""
    from .queries import task_status_counts

    longest, longest_path = get_longest_path(c)
    metrics = get_parallelism_metrics(c)

    def iso(value: Any) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "constellation_id": c.constellation_id,
        "name": c.name,
        "state": c.state.value,
        "total_tasks": c.task_count,
        "total_dependencies": c.dependency_count,
        "task_status_counts": task_status_counts(c),
        "longest_path_length": longest,
        "longest_path_tasks": longest_path,
        "max_width": get_max_width(c),
        "critical_path_length": metrics["critical_path_length"],
        "total_work": metrics["total_work"],
        "parallelism_ratio": metrics["parallelism_ratio"],
        "parallelism_calculation_mode": metrics["calculation_mode"],
        "critical_path_tasks": metrics["critical_path_tasks"],
        "execution_duration": c.execution_duration,
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
        "execution_start_time": iso(c.execution_start_time),
        "execution_end_time": iso(c.execution_end_time),
    }


class ConstellationAnalysis:
    """Mixin exposing the metric functions as TaskConstellation methods (reference API)."""

    def _self(self) -> TaskConstellation:
        return cast("TaskConstellation", self)

    def get_longest_path(self) -> tuple[int, list[str]]:
        """Number of tasks on the longest path, and the path."""
        return get_longest_path(self._self())

    def get_critical_path_length_with_time(self) -> tuple[float, list[str]]:
        """Longest path by execution time in seconds, and the path."""
        return get_critical_path_length_with_time(self._self())

    def get_max_width(self) -> int:
        """Most tasks on one depth level."""
        return get_max_width(self._self())

    def get_total_work(self) -> float:
        """Sum of execution durations in seconds."""
        return get_total_work(self._self())

    def get_parallelism_metrics(self) -> dict[str, Any]:
        """Critical path, total work, ratio and calculation mode (node_count / actual_time / empty)."""
        return get_parallelism_metrics(self._self())

    def get_statistics(self) -> dict[str, Any]:
        """The reference's statistics dictionary."""
        return get_statistics(self._self())

    def display_dag(self, mode: str = "overview", console: Console | None = None) -> None:
        """Print the constellation: overview, topology, details or execution (see ``display``)."""
        from .display import display_dag  # the display module imports the constellation

        display_dag(self._self(), mode, console)
