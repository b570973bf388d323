"""The experience summarizer: a finished run's log folder (``response.log`` + ``result.json``) becomes
one :class:`~starweave.knowledge.examples.Example` (request, steps, outcome).

Deterministic, with no model call: the steps are read straight from the logs, so a summary is fast,
exact and the same every time (the reference asks a model to summarize; its summary can drift from
what was actually done). Works for LinuxAgent runs (one record per command) and HostAgent runs (the
HostAgent's assignments and each AppAgent's actions; the application worked in is the example's app).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.errors import StarweaveError
from starweave.knowledge.examples import Example, ExampleStep
from starweave.text import flat_clip

RESPONSE_LOG = "response.log"
RESULT_FILE = "result.json"
#: A step's output is cut here in the summary (the prompt clips again, to its own limit).
RESULT_LIMIT = 240
#: The arguments of a call that are left out of its short form: empty, or mere window plumbing.
_QUIET_ARGUMENTS = frozenset({"control_focus", "clear_current_text"})


class SummaryError(StarweaveError):
    """A log cannot be summarized: not a run's response log, empty, or from a run that did not finish."""


@dataclass
class RunSummary:
    """A summarized run: its example, the application it worked in (a HostAgent run), its status."""

    example: Example
    app: str | None
    status: str


def short_call(function: str, arguments: Mapping[str, Any] | None) -> str:
    """A readable one-line form of a tool call: ``execute_command ls -l`` when it has one text
    argument, else ``click_input(id='3', name='7')`` without its empty arguments."""
    if not function:
        return ""
    shown = {
        k: v
        for k, v in (arguments or {}).items()
        if v not in ("", None, [], {}) and k not in _QUIET_ARGUMENTS
    }
    if len(shown) == 1:
        ((key, value),) = shown.items()
        if isinstance(value, str) and key != "id":  # "texts 8" would hide that 8 is a control
            return f"{function} {value}"
    if not shown:
        return function
    return f"{function}(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


def _actions(record: Mapping[str, Any]) -> list[str]:
    """The calls of one response-log record, in order (an AppAgent step may hold several)."""
    action = record.get("action")
    if record.get("agent_type") == "HostAgent" or (action is None and record.get("function_name")):
        return [short_call(str(record.get("function_name") or ""), record.get("function_arguments"))]
    items = action if isinstance(action, list) else [action]
    calls = [
        short_call(str(item.get("function") or ""), item.get("arguments"))
        for item in items
        if isinstance(item, Mapping)
    ]
    return [c for c in calls if c]


def _output(record: Mapping[str, Any]) -> str:
    output = str(record.get("output") or "")
    # "(nothing was run)" / "(no action was run)" say no more than an empty result does.
    return "" if output.startswith("(no") and output.endswith("run)") else output


def step_of(record: Mapping[str, Any]) -> ExampleStep | None:
    """The example step of one response-log record, or None for a step without an action."""
    calls = [c for c in _actions(record) if c]
    if not calls:
        return None
    result = _output(record)
    if record.get("agent_type") == "HostAgent" and record.get("subtask"):
        where = record.get("selected_application_root") or record.get("assigned_third_party_agent") or ""
        result = f"assigned to {where}: {record['subtask']}" if where else f"assigned: {record['subtask']}"
    thought = str(record.get("thought") or "")
    return ExampleStep(
        thought=flat_clip(thought, RESULT_LIMIT),
        action="; ".join(calls),
        result=flat_clip(result, RESULT_LIMIT),
    )


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a ``response.log``; a line that is not a JSON object is a SummaryError."""
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SummaryError(f"{path}: line {number} is not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise SummaryError(f"{path}: line {number} is not a step record (a JSON object)")
        records.append(record)
    return records


def _read_result(folder: Path) -> dict[str, Any]:
    path = folder / RESULT_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SummaryError(f"{path}: not JSON ({exc.msg})") from None
    return data if isinstance(data, dict) else {}


def _application(records: list[dict[str, Any]], result: Mapping[str, Any]) -> str | None:
    """The application a HostAgent run worked in most (the first one on a tie), or None."""
    apps = [str(s.get("application") or "") for s in result.get("subtasks") or [] if isinstance(s, Mapping)]
    apps += [
        str(r.get("selected_application_root") or "") for r in records if r.get("agent_type") == "HostAgent"
    ]
    counted = Counter(a for a in apps if a)
    return counted.most_common(1)[0][0] if counted else None


def summarize_records(
    records: list[dict[str, Any]], result: Mapping[str, Any] | None = None, source: str = "experience"
) -> RunSummary:
    """The example of a run from its step records and (when known) its ``result.json``."""
    result = result or {}
    steps = [r for r in records if "step" in r or "agent_type" in r]
    if not steps:
        raise SummaryError("no agent steps in the log (is it a Starweave response.log?)")
    request = str(result.get("request") or next((r["request"] for r in steps if r.get("request")), ""))
    if not request:
        raise SummaryError("the log names no request")
    host = result.get("agent") == "HostAgent" or any(r.get("agent_type") == "HostAgent" for r in steps)
    # The run's end: result.json's status, else the last step of the agent that ran the session.
    top = [r for r in steps if r.get("agent_type") == "HostAgent"] if host else steps
    status = str(result.get("status") or (top[-1].get("status") if top else "") or "")
    outcome = str(result.get("result") or next((r["result"] for r in reversed(top) if r.get("result")), ""))
    example = Example(
        request=request,
        steps=[s for s in (step_of(r) for r in steps if r.get("status") != "ERROR") if s is not None],
        outcome=outcome,
        agent="host" if host else "linux",
        source=source,
    )
    return RunSummary(example, _application(steps, result) if host else None, status)


def log_file(path: Path) -> Path:
    """The ``response.log`` that ``path`` names: the file itself, or the one in a log folder."""
    return path / RESPONSE_LOG if path.is_dir() else path


def summarize_run(path: Path, source: str = "experience") -> RunSummary:
    """The example of the run whose log folder (or ``response.log``) is ``path``."""
    log = log_file(path)
    if not log.is_file():
        raise SummaryError(f"{path}: no {RESPONSE_LOG} (give a run's log folder or its {RESPONSE_LOG})")
    return summarize_records(read_records(log), _read_result(log.parent), source)
