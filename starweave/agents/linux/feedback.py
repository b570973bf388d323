"""What the model sees of a tool's result: exit code and output, cut to fit the context window."""

from __future__ import annotations

import json
from typing import Any

from starweave.agents.linux.hints import failure_hint
from starweave.agents.linux.orientation import size_text
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
    if value.get("cwd"):
        # The shell keeps the folder a command cd'd to, as a terminal does: paths the model writes
        # next are relative to it, so it must know.
        parts.append(f"(the next command starts in {value['cwd']})")
    if value.get("note"):
        parts.append(f"(note: {value['note']})")
    return "\n".join(parts)


def _entry(entry: Any) -> str:
    if not isinstance(entry, dict):
        return str(entry)
    name, kind = str(entry.get("name")), entry.get("type")
    if kind == "dir":
        return f"{name}/"
    if kind == "file" and isinstance(entry.get("size"), int):
        return f"{name}  {size_text(entry['size'])}"
    return f"{name}  ({kind})"


def _file_tool_output(value: dict[str, Any], limit: int) -> str | None:
    """A file tool's answer as text: a listing one entry a line, a file's text, what was written.

    Pretty-printed JSON of a ten-file listing costs the embedded model ~350 prompt tokens (~9 s);
    these lines cost a third of that and read like ``ls``.
    """
    note = f"\n(note: {value['note']})" if value.get("note") else ""
    entries = value.get("entries")
    if isinstance(entries, list):
        total = value.get("total", len(entries))
        lines = [f"{value.get('path', '')}: {total} entries", *(_entry(e) for e in entries)]
        more = "\n(more entries were left out)" if value.get("truncated") else ""
        return clip("\n".join(lines), limit) + more + note
    if isinstance(value.get("content"), str):
        cut = ", cut short" if value.get("truncated") else ""
        head = f"{value.get('path', '')} ({value.get('size', '?')} bytes{cut}):"
        return f"{head}\n{clip(value['content'], limit)}{note}"
    if "bytes_written" in value:
        return f"wrote {value['bytes_written']} bytes to {value.get('path', '')}{note}"
    return None


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
        text = _file_tool_output(value, limit)
        return text if text is not None else clip(json.dumps(value, ensure_ascii=False), limit)
    if result.status == ResultStatus.FAILURE:
        return f"Error: {result.error or value}"
    if value is None or value == "":
        return "(no output)"
    return clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), limit)


def describe_results(results: list[Result], limit: int = OUTPUT_LIMIT) -> str:
    """All results of a step, one after the other."""
    return "\n".join(describe_result(r, limit) for r in results) if results else NOTHING_RUN


def results_failed(results: list[Result]) -> bool:
    """Whether a step ran a call and it failed (some result is not ok)."""
    return bool(results) and not all(r.ok for r in results)


def step_output(results: list[Result], note: str = "") -> str:
    """What the model is shown of a step: the note, the results and, if the call failed, a hint."""
    output = describe_results(results) if results else note or NOTHING_RUN
    if results and note:
        output = f"{note}\n{output}"
    if results_failed(results):
        hint = failure_hint(results)
        if hint:
            output = f"{output}\n{hint}"
    return output
