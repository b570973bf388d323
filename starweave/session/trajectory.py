"""The markdown trajectory (``output.md``) of a session, built from its response log and result."""

from __future__ import annotations

import json
from typing import Any

from starweave.agents.linux.feedback import clip


def _fence(text: str) -> str:
    text = text.rstrip()
    return f"```\n{text}\n```" if text else "_(empty)_"


def _output_of(record: dict[str, Any]) -> str:
    results = record.get("results")
    if not results:
        return ""
    if isinstance(results, str):
        return results
    parts = []
    for item in results:
        value = item.get("result") if isinstance(item, dict) else item
        if isinstance(value, dict):
            if "stdout" in value or "stderr" in value:
                parts.append(str(value.get("stdout", "")) + str(value.get("stderr", "")))
                continue
            value = json.dumps(value, ensure_ascii=False, indent=1)
        parts.append(
            str(value if value is not None else (item.get("error") if isinstance(item, dict) else ""))
        )
    return "\n".join(parts)


def trajectory_markdown(request: str, records: list[dict[str, Any]], result: dict[str, Any]) -> str:
    """Render the session as markdown: the request, each step, and the outcome."""
    lines = [
        f"# Trajectory: {result.get('task', '')}",
        "",
        f"**Request:** {request}",
        "",
        f"**Status:** {result.get('status', '')}  ",
        f"**Steps:** {result.get('steps', len(records))}  ",
        f"**Cost:** ${float(result.get('cost', 0.0)):.4f}  ",
        f"**Duration:** {float(result.get('duration', 0.0)):.1f} s",
        "",
    ]
    for record in records:
        action = record.get("action") or {}
        call = record.get("call") or (action.get("function", "") if isinstance(action, dict) else "")
        lines += [
            f"## Step {record.get('step', '?')}: {record.get('status', '')}",
            "",
            f"- **Observation:** {record.get('observation', '')}",
            f"- **Thought:** {record.get('thought', '')}",
            f"- **Action:** `{call}`",
            f"- **Time:** {float(record.get('total_time', 0.0)):.2f} s, tokens {record.get('tokens', 0)}",
            "",
        ]
        output = _output_of(record)
        if output:
            lines += ["Output:", "", _fence(clip(output, 4000)), ""]
    lines += ["## Result", "", str(result.get("result", "")) or "_(none)_", ""]
    return "\n".join(lines)
