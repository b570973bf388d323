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

#: Characters of one step's output, of one thought or result, and of the whole trajectory.
OUTPUT_CHARS = 600
FIELD_CHARS = 300
TRAJECTORY_CHARS = 6000


def _one_line(value: Any, limit: int = FIELD_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(action: Any) -> str:
    """``function(arguments)`` of a step's action (a dict, or a list of them), or '' for none."""
    actions = action if isinstance(action, list) else [action]
    calls = []
    for item in actions:
        if not isinstance(item, Mapping) or not item.get("function"):
            continue
        arguments = json.dumps(item.get("arguments") or {}, ensure_ascii=False, default=str)
        calls.append(f"{item['function']}({arguments})")
    return "; ".join(calls)


def _output(results: Any) -> str:
    """The text the step's tool calls returned: stdout/stderr/error, else the result as JSON."""
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
    return clip("\n".join(p for p in parts if p), OUTPUT_CHARS)


def step_text(record: Mapping[str, Any]) -> str:
    """One step of the trajectory, a few lines."""
    lines = [f"Step {record.get('step', '?')} (status {record.get('status', '')}):"]
    if record.get("thought"):
        lines.append(f"  thought: {_one_line(record['thought'])}")
    call = _call(record.get("action"))
    lines.append(f"  action: {_one_line(call) if call else '(none)'}")
    output = _output(record.get("results"))
    if output:
        lines.append("  output:\n" + "\n".join(f"    {line}" for line in output.splitlines()))
    if record.get("note"):
        lines.append(f"  note: {_one_line(record['note'])}")
    if record.get("result"):
        lines.append(f"  result: {_one_line(record['result'])}")
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
