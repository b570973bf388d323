"""What the model sees of a tool's result: exit code and output, cut to fit the context window."""

from __future__ import annotations

import json
from typing import Any

from starweave.commands import Result, ResultStatus

# Per stream, in characters. The embedded model has a 4,096-token window shared by the system
# prompt and every previous step, so outputs are cut to their head and tail.
OUTPUT_LIMIT = 1500
NOTHING_RUN = "(nothing was run)"


def clip(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Keep the head and the tail of ``text`` when it is longer than ``limit``."""
    text = text.rstrip("\n")
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = text[head:-tail].count("\n") + 1
    return f"{text[:head]}\n… ({omitted} lines cut) …\n{text[-tail:]}"


def _shell_output(value: dict[str, Any], limit: int) -> str:
    parts = [f"Error: {value['error']}"] if value.get("error") else []
    if value.get("exit_code") is not None:
        parts.append(f"exit code {value['exit_code']}")
    stdout = str(value.get("stdout") or "")
    stderr = str(value.get("stderr") or "")
    if stdout.strip():
        parts.append("stdout:\n" + clip(stdout, limit))
    if stderr.strip():
        parts.append("stderr:\n" + clip(stderr, limit))
    if not stdout.strip() and not stderr.strip():
        parts.append("(no output)")
    if value.get("truncated"):
        parts.append("(the output was longer and was cut)")
    return "\n".join(parts)


def describe_result(result: Result, limit: int = OUTPUT_LIMIT) -> str:
    """A plain-text account of one Result for the next prompt and the console."""
    value = result.result
    if result.status == ResultStatus.SKIPPED:
        return f"Not run: {result.error or value or 'skipped'}"
    if isinstance(value, dict):
        if "exit_code" in value or "stdout" in value:
            return _shell_output(value, limit)
        if value.get("success") is False and value.get("error"):
            return f"Error: {value['error']}"
        return clip(json.dumps(value, ensure_ascii=False, indent=1), limit)
    if result.status == ResultStatus.FAILURE:
        return f"Error: {result.error or value}"
    if value is None or value == "":
        return "(no output)"
    return clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), limit)


def describe_results(results: list[Result], limit: int = OUTPUT_LIMIT) -> str:
    """All results of a step, one after the other."""
    return "\n".join(describe_result(r, limit) for r in results) if results else NOTHING_RUN
