"""Terminal views of a constellation in the reference's four display modes.

- ``overview``: identity, state, task counts by status and the parallelism figures;
- ``topology``: the layered dependency tree (``render.to_rich_tree``);
- ``details``: every task's fields and every dependency;
- ``execution``: what ran where, when, for how long and with which outcome.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from starweave.errors import ConstellationError

from .constellation import TaskConstellation
from .enums import TaskStatus
from .render import STATUS_STYLES, to_rich_tree

DISPLAY_MODES = ("overview", "topology", "details", "execution")
CELL_LIMIT = 60


def _cell(value: object, limit: int = CELL_LIMIT) -> Text:
    """Plain text (markup in task data is shown literally), shortened to ``limit`` characters."""
    text = "" if value is None else str(value)
    return Text(text if len(text) <= limit else text[: limit - 1] + "…")


def _status(status: TaskStatus) -> Text:
    return Text(status.value, style=STATUS_STYLES[status])


def overview(c: TaskConstellation) -> RenderableType:
    """Identity, state, counts by status, longest path, width and parallelism."""
    stats = c.get_statistics()
    table = Table.grid(padding=(0, 2))
    table.add_row("Constellation", _cell(f"{c.name} ({c.constellation_id})", 100))
    table.add_row("State", Text(c.state.value, style="bold"))
    table.add_row("Tasks", str(c.task_count))
    table.add_row("Dependencies", str(c.dependency_count))
    counts = Text()
    for status, count in c.status_counts().items():
        if count:
            counts.append(f"{status.value}: {count}  ", style=STATUS_STYLES[status])
    table.add_row("By status", counts or Text("-"))
    table.add_row("Longest path", f"{stats['longest_path_length']} tasks")
    table.add_row("Max width", str(stats["max_width"]))
    table.add_row(
        "Parallelism",
        f"{stats['parallelism_ratio']:.2f} ({stats['parallelism_calculation_mode']})",
    )
    if c.execution_duration is not None:
        table.add_row("Duration", f"{c.execution_duration:.1f} s")
    return Panel(table, title="🌌 Constellation overview", expand=False)


def details(c: TaskConstellation) -> RenderableType:
    """A table of tasks (with their predecessors) and a table of dependencies."""
    tasks = Table(title="Tasks", show_lines=False)
    for column in ("ID", "Name", "Status", "Device", "Priority", "After", "Description"):
        tasks.add_column(column)
    for task in c.get_all_tasks():
        preds = sorted(set(c.dag.in_lines(task.task_id).values()))
        tasks.add_row(
            _cell(task.task_id, 24),
            _cell(task.name, 24),
            _status(task.status),
            _cell(task.target_device_id or "-", 20),
            task.priority.name,
            _cell(", ".join(preds) or "-", 30),
            _cell(task.description),
        )
    lines = Table(title="Dependencies")
    for column in ("ID", "From", "To", "Type", "Satisfied", "Condition"):
        lines.add_column(column)
    for line in c.get_all_dependencies():
        lines.add_row(
            _cell(line.line_id, 24),
            _cell(line.from_task_id, 24),
            _cell(line.to_task_id, 24),
            line.dependency_type.value,
            "yes" if line.is_satisfied() else "no",
            _cell(line.condition_description or "-"),
        )
    return Group(tasks, lines)


def execution(c: TaskConstellation) -> RenderableType:
    """Progress and, per task, its device, times, duration and result or error."""
    done = sum(1 for task in c.get_all_tasks() if task.is_terminal)
    table = Table(title=f"Execution: {done}/{c.task_count} tasks finished, state {c.state.value}")
    for column in ("ID", "Status", "Device", "Started", "Ended", "Seconds", "Result / error"):
        table.add_column(column)
    for task in c.get_all_tasks():
        start, end = task.execution_start_time, task.execution_end_time
        outcome = task.error if task.error is not None else task.result
        table.add_row(
            _cell(task.task_id, 24),
            _status(task.status),
            _cell(task.target_device_id or "-", 20),
            start.strftime("%H:%M:%S") if start else "-",
            end.strftime("%H:%M:%S") if end else "-",
            f"{task.execution_duration:.1f}" if task.execution_duration is not None else "-",
            _cell(outcome if outcome is not None else "-"),
        )
    return table


def render_constellation(c: TaskConstellation, mode: str = "overview") -> RenderableType:
    """The renderable for ``mode``; an unknown mode is a ConstellationError naming the valid ones."""
    if mode == "overview":
        return overview(c)
    if mode == "topology":
        return to_rich_tree(c)
    if mode == "details":
        return details(c)
    if mode == "execution":
        return execution(c)
    raise ConstellationError(f"Unknown display mode {mode!r}; use one of {', '.join(DISPLAY_MODES)}")


def display_dag(c: TaskConstellation, mode: str = "overview", console: Console | None = None) -> None:
    """Print ``c`` in ``mode`` on ``console`` (standard output by default)."""
    (console or Console()).print(render_constellation(c, mode))
