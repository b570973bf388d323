"""Renderables and one-line messages for the live Galaxy view (kept apart from the Live plumbing)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from starweave.galaxy.constellation import TaskConstellation, TaskStatus
from starweave.galaxy.constellation.render import STATUS_STYLES
from starweave.galaxy.events import AgentEvent, ConstellationEvent, DeviceEvent, Event, EventType, TaskEvent

from .changes import calculate_constellation_changes, format_change_summary

DEVICE_STYLES = {
    "idle": "green",
    "connected": "green",
    "busy": "blue",
    "connecting": "yellow",
    "disconnected": "red",
    "failed": "red",
}
STATUS_RANK = {
    "pending": 0,
    "waiting_dependency": 0,
    "running": 1,
    "completed": 2,
    "failed": 2,
    "cancelled": 2,
    "timeout": 2,
}


_STATUS_VALUES = frozenset(s.value for s in TaskStatus)
_TERMINAL_VALUES = frozenset({"completed", "failed", "cancelled"})


def clip(text: object, limit: int = 80) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def task_device(event: TaskEvent, constellation: TaskConstellation | None) -> str | None:
    """The device of a task event: the result's device, else the task's assignment."""
    device = getattr(event.result, "device_id", None)
    if device is None and constellation is not None:
        task = constellation.get_task(event.task_id)
        device = task.target_device_id if task is not None else None
    return device


def event_message(event: Event, constellation: TaskConstellation | None) -> str | None:
    """A one-line description of an event for the plain progress output (None: nothing to say)."""
    kind = event.event_type
    if isinstance(event, TaskEvent):
        where = task_device(event, constellation) or "unassigned device"
        if kind is EventType.TASK_STARTED:
            return f"task {event.task_id} started on {where}"
        if kind is EventType.TASK_COMPLETED:
            ready = event.data.get("newly_ready_tasks") or []
            return f"task {event.task_id} {event.status or 'completed'} on {where} ({len(ready)} newly ready)"
        error = event.error if event.error is not None else getattr(event.result, "error", None)
        return (
            f"task {event.task_id} {event.status or 'failed'} on {where}: {clip(error or 'no error given')}"
        )
    if isinstance(event, ConstellationEvent) or kind.value.startswith("constellation_"):
        cid = getattr(event, "constellation_id", "") or "?"
        if kind is EventType.CONSTELLATION_STARTED:
            return f"constellation {cid} started: {event.data.get('total_tasks', '?')} tasks"
        if kind is EventType.CONSTELLATION_COMPLETED:
            duration = event.data.get("execution_duration")
            took = f" in {duration:.1f}s" if isinstance(duration, int | float) else ""
            return f"constellation {cid} completed{took}"
        if kind is EventType.CONSTELLATION_FAILED:
            return f"constellation {cid} failed: {clip(event.data.get('error') or 'no error given')}"
        if kind is EventType.CONSTELLATION_MODIFIED:
            old, new = event.data.get("old_constellation"), event.data.get("new_constellation")
            summary = "edited"
            if new is not None:
                summary = format_change_summary(calculate_constellation_changes(old, new))
            return f"constellation {cid} modified ({summary})"
    if isinstance(event, AgentEvent):
        if kind is EventType.AGENT_RESPONSE:
            status = event.output_data.get("status", "")
            thought = clip(event.output_data.get("thought") or "", 60)
            return f"agent {event.agent_name}: {status} {thought}".rstrip()
        actions = event.output_data.get("actions") or []
        names = [str(a.get("function") or a.get("name") or "?") for a in actions if isinstance(a, dict)]
        return f"agent {event.agent_name} actions: {', '.join(names) or 'none'}"
    if isinstance(event, DeviceEvent):
        return f"device {event.device_id}: {event.device_status}"
    return None


def _task_label(c: TaskConstellation, task_id: str, states: dict[str, str], devices: dict[str, str]) -> Text:
    task = c.get_task(task_id)
    status = effective_status(task.status.value if task else "pending", states.get(task_id))
    device = (task.target_device_id if task else None) or devices.get(task_id) or "unassigned"
    style = STATUS_STYLES[TaskStatus(status)] if status in _STATUS_VALUES else ""
    label = Text(f"[{task_id}] {clip(task.name if task else '', 40)} ", style=style)
    label.append(f"· {device} ", style="cyan")
    label.append(f"({status})", style="italic")
    if task is not None and task.execution_duration is not None:
        label.append(f" {task.execution_duration:.1f}s", style="dim")
    return label


def effective_status(constellation_status: str, event_status: str | None) -> str:
    """The more advanced of the constellation's status and the latest task event's status."""
    if event_status is None:
        return constellation_status
    if STATUS_RANK.get(event_status, 0) > STATUS_RANK.get(constellation_status, 0):
        return "failed" if event_status == "timeout" else event_status
    return constellation_status


def dag_view(
    c: TaskConstellation | None, states: dict[str, str], devices: dict[str, str], max_tasks: int
) -> RenderableType:
    """The DAG as a tree by depth level, each task with its device and state; large DAGs are
    summarised (counts plus the running tasks) so a refresh stays cheap."""
    if c is None:
        return Text("No constellation yet", style="dim")
    root = Tree(Text(f"🌌 {c.name} ({c.state.value})", style="bold"))
    counts = Text()
    for status, count in c.status_counts().items():
        if count:
            counts.append(f"{status.value}: {count}  ", style=STATUS_STYLES[status])
    root.add(counts or Text("no tasks", style="dim"))
    if c.task_count > max_tasks:
        running = root.add(Text("Running", style="bold blue"))
        for task in c.get_running_tasks()[:max_tasks]:
            running.add(_task_label(c, task.task_id, states, devices))
        return root
    depth = c.dag.levels()
    layers: dict[int, Tree] = {}
    for task_id in c.dag.topological_order():
        level = depth[task_id]
        if level not in layers:
            layers[level] = root.add(Text(f"Layer {level}", style="bold cyan"))
        layers[level].add(_task_label(c, task_id, states, devices))
    return root


def device_table(devices: dict[str, dict[str, Any]]) -> RenderableType:
    """One row per device: id, status, OS, current task."""
    if not devices:
        return Text("No devices reported yet", style="dim")
    table = Table(title="Devices", expand=False)
    for column in ("Device", "Status", "OS", "Task"):
        table.add_column(column)
    for device_id, info in sorted(devices.items()):
        status = str(info.get("status") or "unknown")
        table.add_row(
            Text(device_id),
            Text(status, style=DEVICE_STYLES.get(status, "white")),
            Text(str(info.get("os") or "-")),
            Text(str(info.get("current_task_id") or "-")),
        )
    return table


def header(
    title: str, elapsed: float, c: TaskConstellation | None, usage: dict[str, float]
) -> RenderableType:
    """Elapsed time, progress, tokens and cost on one panel."""
    grid = Table.grid(padding=(0, 2))
    done = 0
    if c is not None:
        done = sum(n for status, n in c.status_counts().items() if status.value in _TERMINAL_VALUES)
    total = c.task_count if c is not None else 0
    tokens = int(usage["prompt_tokens"] + usage["completion_tokens"])
    grid.add_row(
        Text(f"⏱ {elapsed:.1f}s"),
        Text(f"tasks {done}/{total}"),
        Text(f"tokens {tokens} ({int(usage['prompt_tokens'])} in / {int(usage['completion_tokens'])} out)"),
        Text(f"cost ${usage['cost']:.4f}"),
    )
    return Panel(grid, title=title, border_style="blue", expand=False)


def full_view(
    title: str,
    elapsed: float,
    c: TaskConstellation | None,
    states: dict[str, str],
    task_devices: dict[str, str],
    devices: dict[str, dict[str, Any]],
    usage: dict[str, float],
    recent: list[str],
    max_tasks: int,
) -> RenderableType:
    """Header, DAG, devices and the last few events."""
    parts: list[RenderableType] = [
        header(title, elapsed, c, usage),
        dag_view(c, states, task_devices, max_tasks),
        device_table(devices),
    ]
    if recent:
        parts.append(Text("\n".join(recent), style="dim"))
    return Group(*parts)
