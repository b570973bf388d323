"""Tolerant readers for the files of a Galaxy log folder.

A bad line never stops a report: it is skipped and a warning names the file and line number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starweave.errors import ConstellationError
from starweave.galaxy.constellation import TaskConstellation

PREVIEW = 200


@dataclass
class JsonLines:
    """The objects of a JSON-lines file and what was wrong with the lines that were skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_jsonl(path: Path) -> JsonLines:
    """Read ``path`` line by line; blank lines are ignored, undecodable or non-object lines skipped
    with a warning. Each record gets ``_line_number``. A missing file gives no records."""
    out = JsonLines()
    if not path.exists():
        return out
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                out.warnings.append(f"{path.name} line {number}: not valid JSON ({exc.msg}); skipped")
                continue
            if not isinstance(record, dict):
                out.warnings.append(f"{path.name} line {number}: not a JSON object; skipped")
                continue
            record["_line_number"] = number
            out.records.append(record)
    return out


def read_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object file, or ``(None, warning)`` when it is missing or unreadable."""
    if not path.exists():
        return None, None
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        return None, f"{path.name}: not valid JSON ({exc.msg}); ignored"
    if not isinstance(data, dict):
        return None, f"{path.name}: not a JSON object; ignored"
    return data, None


@dataclass
class ParsedConstellation:
    """A constellation from a log: its dict, the rebuilt object when possible, and any problem."""

    data: dict[str, Any] | None = None
    constellation: TaskConstellation | None = None
    error: str | None = None


def parse_constellation(value: Any) -> ParsedConstellation:
    """Read a logged constellation (JSON text or dict). Legacy logs that stored ``tasks`` as a
    string, and JSON that does not decode, give an ``error`` instead of raising."""
    if value is None or value == "":
        return ParsedConstellation()
    data = value
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except json.JSONDecodeError as exc:
            return ParsedConstellation(error=f"json_decode_error: {exc.msg}; preview: {value[:PREVIEW]!r}")
    if not isinstance(data, dict):
        return ParsedConstellation(
            error=f"unexpected_error: a constellation must be an object, not {type(data).__name__}"
        )
    if isinstance(data.get("tasks"), str):
        preview = data["tasks"][:PREVIEW]
        return ParsedConstellation(
            data={**data, "tasks": {}, "dependencies": {}},
            error=f"legacy_serialization_bug: 'tasks' was logged as a string; preview: {preview!r}",
        )
    if isinstance(data.get("dependencies"), str):
        data = {**data, "dependencies": {}}
    for key in ("tasks", "dependencies"):
        if data.get(key) is not None and not isinstance(data[key], dict | list):
            kind = type(data[key]).__name__
            return ParsedConstellation(
                data={**data, "tasks": {}, "dependencies": {}},
                error=f"unexpected_error: '{key}' must be an object or a list, not {kind}",
            )
    try:
        constellation = TaskConstellation.from_dict(data)
    except (ConstellationError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return ParsedConstellation(
            data=data, error=f"unexpected_error: cannot rebuild the constellation ({exc})"
        )
    return ParsedConstellation(data=data, constellation=constellation)


def task_dicts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The task dicts of a logged constellation (``{id: task}`` or a list; junk entries dropped)."""
    return _entries(data.get("tasks"))


def line_dicts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The dependency dicts of a logged constellation."""
    return _entries(data.get("dependencies"))


def _entries(value: Any) -> list[dict[str, Any]]:
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [item for item in items if isinstance(item, dict)]
