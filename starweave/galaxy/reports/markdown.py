"""Markdown building blocks of the trajectory report: tables, graphs and collapsible details."""

from __future__ import annotations

import json
from typing import Any

from starweave.galaxy.constellation import TaskPriority, to_mermaid

from .loading import ParsedConstellation, line_dicts, task_dicts

MERMAID_MAX_TASKS = 150
TABLE_MAX_ROWS = 500
NAME_LIMIT = 40
CONDITION_LIMIT = 50


def cell(value: Any, limit: int | None = None) -> str:
    """Text safe for a markdown table cell (pipes escaped, one line, optionally shortened)."""
    text = "-" if value is None or value == "" else " ".join(str(value).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def row(*cells: str) -> str:
    """One markdown table row of already escaped cells."""
    return "| " + " | ".join(cells) + " |"


def fence(text: str, lang: str = "") -> list[str]:
    """A fenced block whose fence is longer than any backtick run inside ``text``."""
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    return [f"{ticks}{lang}", text.rstrip("\n"), ticks]


def _longest_backticks(text: str) -> int:
    best = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        best = max(best, run)
    return best


def details(summary: str, body: list[str]) -> list[str]:
    """A collapsible ``<details>`` block."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def json_block(value: Any) -> list[str]:
    """Pretty JSON in a fenced block."""
    return fence(json.dumps(value, indent=2, ensure_ascii=False, default=str), "json")


def priority_name(value: Any) -> str:
    """``MEDIUM (2)`` for a logged priority number; anything else as logged."""
    try:
        return f"{TaskPriority(int(value)).name} ({int(value)})"
    except (TypeError, ValueError):
        return cell(value)


def _duration(task: dict[str, Any]) -> str:
    value = task.get("execution_duration")
    return f"{value:.2f}s" if isinstance(value, int | float) else "-"


def task_table(data: dict[str, Any]) -> list[str]:
    """| Task ID | Name | Status | Device | Duration |."""
    tasks = task_dicts(data)
    out = ["| Task ID | Name | Status | Device | Duration |", "|---|---|---|---|---|"]
    for task in tasks[:TABLE_MAX_ROWS]:
        out.append(
            row(
                cell(task.get("task_id")),
                cell(task.get("name"), NAME_LIMIT),
                cell(task.get("status")),
                cell(task.get("target_device_id")),
                _duration(task),
            )
        )
    if len(tasks) > TABLE_MAX_ROWS:
        out.append(f"| … | {len(tasks) - TABLE_MAX_ROWS} more tasks | | | |")
    return [*out, ""]


def _result_text(result: Any) -> str:
    # Device results often nest the answer as {"result": [...]}: show the inner list.
    if isinstance(result, dict) and isinstance(result.get("result"), list):
        result = result["result"]
    if isinstance(result, str):
        return result
    return json.dumps(result, indent=2, ensure_ascii=False, default=str)


def task_details(data: dict[str, Any]) -> list[str]:
    """Per task: status, device, priority, description, tips, result, error, times."""
    out: list[str] = []
    for task in task_dicts(data)[:TABLE_MAX_ROWS]:
        out += [
            f"**{cell(task.get('task_id'))}: {cell(task.get('name'))}**",
            "",
            f"- Status: {cell(task.get('status'))}",
            f"- Target Device: {cell(task.get('target_device_id'))}",
            f"- Priority: {priority_name(task.get('priority'))}",
        ]
        description = str(task.get("description") or task.get("task_description") or "").strip()
        if description:
            out += ["- Description:", "", *(f"  > {line}" for line in description.splitlines()), ""]
        tips = [str(tip) for tip in task.get("tips") or []][:3]
        if tips:
            out += ["- Tips:", *(f"  - {cell(tip)}" for tip in tips)]
        if task.get("result") is not None:
            out += ["- Result:", "", *fence(_result_text(task["result"])), ""]
        if task.get("error"):
            out.append(f"- Error: {cell(task.get('error'))}")
        out += [
            f"- Started: {cell(task.get('execution_start_time'))}",
            f"- Ended: {cell(task.get('execution_end_time'))}",
            f"- Duration: {_duration(task)}",
            "",
        ]
    return out


def dependency_table(data: dict[str, Any]) -> list[str]:
    """| Line ID | From Task | To Task | Type | Satisfied | Condition |."""
    lines = line_dicts(data)
    if not lines:
        return ["_No dependencies._", ""]
    out = ["| Line ID | From Task | To Task | Type | Satisfied | Condition |", "|---|---|---|---|---|---|"]
    for line in lines[:TABLE_MAX_ROWS]:
        satisfied = "[OK]" if line.get("is_satisfied") else "[PENDING]"
        out.append(
            row(
                cell(line.get("line_id")),
                cell(line.get("from_task_id")),
                cell(line.get("to_task_id")),
                cell(line.get("dependency_type")),
                satisfied,
                cell(line.get("condition_description"), CONDITION_LIMIT),
            )
        )
    return [*out, ""]


def mermaid_graph(parsed: ParsedConstellation) -> list[str]:
    """The DAG as a Mermaid block (``to_mermaid``), or a note saying why it is not shown."""
    c = parsed.constellation
    if c is None:
        return ["_Dependency graph unavailable (the constellation could not be rebuilt)._", ""]
    if c.task_count > MERMAID_MAX_TASKS:
        return [f"_Dependency graph omitted: {c.task_count} tasks (more than {MERMAID_MAX_TASKS})._", ""]
    return [*fence(to_mermaid(c), "mermaid"), ""]


def constellation_section(
    label: str, parsed: ParsedConstellation, include_details: bool, include_tasks: bool, level: int = 5
) -> list[str]:
    """One constellation: identity, parse problem, Mermaid graph, task table, details, dependencies."""
    h = "#" * level
    out = [f"{h} {label}", ""]
    if parsed.data is None and parsed.error is None:
        return [*out, "_No constellation._", ""]
    if parsed.error:
        out += [f"{h}# ⚠️ Parse Error", "", f"`{cell(parsed.error, 300)}`", ""]
    data = parsed.data or {}
    out += [f"- ID: `{cell(data.get('constellation_id'))}`", f"- State: {cell(data.get('state'))}", ""]
    out += [f"{h}# Dependency Graph", "", *mermaid_graph(parsed)]
    out += [f"{h}# Task Summary Table", "", *task_table(data)]
    if include_details:
        if include_tasks:
            out += details("Detailed Task Information", task_details(data))
        out += [f"{h}# Dependency Details", "", *dependency_table(data)]
    return out


def device_rows(device_info: Any) -> list[dict[str, Any]]:
    """Device dicts from ``{id: profile}`` or ``[profile, ...]``."""
    if isinstance(device_info, dict):
        return [
            dict(v, device_id=v.get("device_id") or k) for k, v in device_info.items() if isinstance(v, dict)
        ]
    if isinstance(device_info, list):
        return [d for d in device_info if isinstance(d, dict)]
    return []


def device_table(devices: list[dict[str, Any]]) -> list[str]:
    """| Device ID | OS | Status | Capabilities | Last Heartbeat |."""
    if not devices:
        return ["_No device information._", ""]
    out = ["| Device ID | OS | Status | Capabilities | Last Heartbeat |", "|---|---|---|---|---|"]
    for device in devices:
        heartbeat = str(device.get("last_heartbeat") or "-")[:19]
        caps = ", ".join(str(c) for c in device.get("capabilities") or []) or "-"
        out.append(
            f"| {cell(device.get('device_id'))} | {cell(device.get('os'))} | {cell(device.get('status'))} "
            f"| {cell(caps, 60)} | {cell(heartbeat)} |"
        )
    return [*out, ""]


def stats_table(title: str, stats: dict[str, Any]) -> list[str]:
    """A two-column table of the scalar entries of a statistics dict."""
    out = [f"### {title}", "", "| Metric | Value |", "|---|---|"]
    for key, value in stats.items():
        if isinstance(value, float):
            shown = f"{value:.3f}"
        elif isinstance(value, dict | list):
            shown = json.dumps(value, ensure_ascii=False, default=str)
        else:
            shown = str(value)
        out.append(f"| {cell(key)} | {cell(shown, 200)} |")
    return [*out, ""]
