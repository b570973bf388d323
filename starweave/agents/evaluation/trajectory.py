"""The session's trajectory as the text the EvaluationAgent judges, kept within a budget.

Built from ``response.log`` records (one per agent step): the step's thought, its call, the
tool's output, the status and the result. Outputs are clipped head-and-tail, and when the whole
text is still too long the oldest steps are dropped first (the last steps decide completion).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from starweave.agents.linux.feedback import clip
from starweave.text import flat_clip

#: Characters of one step's output, of one thought or result, and of the whole trajectory.
OUTPUT_CHARS = 600
FIELD_CHARS = 300
TRAJECTORY_CHARS = 6000


def _one_line(value: Any, limit: int = FIELD_CHARS) -> str:
    return flat_clip(
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str), limit
    )


def _call(record: Mapping[str, Any]) -> str:
    """``function(arguments)`` of a step's action (a dict, or a list of them) or of a HostAgent step's
    ``function_name``/``function_arguments``; '' for none."""
    action = record.get("action")
    # A copy: the record is the caller's (appending to its own list would change its action).
    actions = list(action) if isinstance(action, list) else [action]
    if record.get("function_name"):
        actions.append({"function": record["function_name"], "arguments": record.get("function_arguments")})
    calls = []
    for item in actions:
        if not isinstance(item, Mapping) or not item.get("function"):
            continue
        arguments = json.dumps(item.get("arguments") or {}, ensure_ascii=False, default=str)
        calls.append(f"{item['function']}({arguments})")
    return "; ".join(calls)


def _output(record: Mapping[str, Any]) -> str:
    """The text the step's tool calls returned: stdout/stderr/error, else the result as JSON; a
    desktop agent's step logs it already as text (``output``)."""
    results = record.get("results")
    parts: list[str] = []
    for item in results if isinstance(results, list) else []:
        if not isinstance(item, Mapping):
            continue
        value = item.get("result")
        if isinstance(value, Mapping):
            shown = [f"exit code {value['exit_code']}"] if value.get("exit_code") is not None else []
            shown += [str(value[k]) for k in ("stdout", "stderr") if value.get(k)]
            text = "\n".join(shown) if shown else json.dumps(value, ensure_ascii=False, default=str)
        else:
            text = "" if value is None else str(value)
        if item.get("error"):
            text = f"Error: {item['error']}\n{text}".strip()
        status = str(item.get("status") or "")
        parts.append(f"[{status}] {text}".strip() if status else text)
    if not parts and isinstance(record.get("output"), str):
        parts.append(record["output"])
    return clip("\n".join(p for p in parts if p), OUTPUT_CHARS)


def _application(record: Mapping[str, Any]) -> str:
    """Where a desktop agent's step acted: its application, or the HostAgent's selected one."""
    return str(
        record.get("application")
        or record.get("assigned_third_party_agent")
        or record.get("selected_application_root")
        or ""
    )


#: The free-text fields of a step in the reference's trajectory order (spec D §21), before the action.
_BEFORE_ACTION = ("observation", "thought", "plan")


def step_text(record: Mapping[str, Any]) -> str:
    """One step of the trajectory, a few lines: the reference's ``{subtask, step, observation,
    thought, plan, comment, action, application}`` where the step has them, and the output."""
    agent = f" {record['agent_name']}" if record.get("agent_name") else ""
    lines = [f"Step {record.get('step', '?')} (status {record.get('status', '')}){agent}:"]
    if record.get("subtask"):
        lines.append(f"  subtask: {_one_line(record['subtask'])}")
    if _application(record):
        lines.append(f"  application: {_one_line(_application(record))}")
    lines += [f"  {key}: {_one_line(record[key])}" for key in _BEFORE_ACTION if record.get(key)]
    call = _call(record)
    lines.append(f"  action: {_one_line(call) if call else '(none)'}")
    output = _output(record)
    if output:
        lines.append("  output:\n" + "\n".join(f"    {line}" for line in output.splitlines()))
    lines += [
        f"  {key}: {_one_line(record[key])}" for key in ("comment", "note", "result") if record.get(key)
    ]
    return "\n".join(lines)


def trajectory_text(records: Iterable[Mapping[str, Any]], limit: int = TRAJECTORY_CHARS) -> str:
    """The steps as text of at most about ``limit`` characters, dropping the oldest steps first."""
    steps = [step_text(record) for record in records]
    if not steps:
        return "(no steps were taken)"
    kept: list[str] = []
    used = 0
    for text in reversed(steps):
        if kept and used + len(text) > limit:
            break
        kept.append(text)
        used += len(text) + 1
    dropped = len(steps) - len(kept)
    head = [f"({dropped} earlier steps left out)"] if dropped else []
    return "\n".join(head + list(reversed(kept)))[: limit + 200]
