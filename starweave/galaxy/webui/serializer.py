"""EventSerializer (spec B §9): bus events as the flat JSON the page reads.

``serialize_event`` flattens an event into ``{event_type, source_id, timestamp, data, <subclass
fields>}``; ``serialize_value`` turns any payload value into JSON-compatible data following the
reference's chain: primitives, datetimes (ISO), dicts/lists/tuples recursively, the registered
handlers (TaskConstellation, TaskStar, TaskStarLine: their JSON form), dataclasses, Pydantic
models, ``to_dict()``, and finally ``str()``. Exceptions become ``"Type: message"``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import date, datetime
from enum import Enum
from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.constellation.serialization import to_jsonable
from starweave.galaxy.events import Event
from starweave.galaxy.observers.serialize import constellation_summary

__all__ = [
    "CONSTELLATION_KEYS",
    "event_json",
    "serialize_event",
    "serialize_value",
    "summarize_event",
    "to_json",
]

# Payload keys that may hold a whole constellation (orchestrator and agent events).
CONSTELLATION_KEYS = ("constellation", "new_constellation", "old_constellation", "updated_constellation")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def page_constellation(c: TaskConstellation) -> dict[str, Any]:
    """The constellation as the page draws it: the reference's keys, only those the page reads.

    The full ``to_dict()`` of a 200-task DAG takes milliseconds (every timestamp, tip and task_data
    of every task); events carrying the DAG go to every open page, so the page's form is lean.
    """
    tasks = {
        t.task_id: {
            "task_id": t.task_id,
            "name": t.name,
            "description": t.description,
            "target_device_id": t.target_device_id,
            "status": t.status.value,
            "result": t.result,
            "error": str(t.error) if t.error is not None else None,
            "execution_start_time": _iso(t.execution_start_time),
            "execution_end_time": _iso(t.execution_end_time),
            "execution_duration": t.execution_duration,
        }
        for t in c.get_all_tasks()
    }
    lines = {
        line.line_id: {
            "line_id": line.line_id,
            "from_task_id": line.from_task_id,
            "to_task_id": line.to_task_id,
            "dependency_type": line.dependency_type.value,
        }
        for line in c.get_all_dependencies()
    }
    return {
        "constellation_id": c.constellation_id,
        "name": c.name,
        "state": c.state.value,
        "tasks": tasks,
        "dependencies": lines,
        "metadata": c.metadata,
        "execution_start_time": _iso(c.execution_start_time),
        "execution_end_time": _iso(c.execution_end_time),
        "execution_duration": c.execution_duration,
    }


_HANDLERS: dict[type, Callable[[Any], Any]] = {
    TaskConstellation: page_constellation,
    TaskStar: lambda t: t.to_dict(),
    TaskStarLine: lambda line: line.to_dict(),
}


def serialize_value(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` (see the module docstring for the order of the rules)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Enum):
        return serialize_value(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): serialize_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [serialize_value(v) for v in value]
    handler = _HANDLERS.get(type(value))
    if handler is not None:
        # json's C encoder walks a 200-task DAG in a fraction of the time a Python recursion takes.
        return to_jsonable(handler(value))
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: serialize_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return serialize_value(model_dump())
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return serialize_value(to_dict())
    return str(value)


def _encoder_default(value: Any) -> Any:
    """For :func:`to_json`: what serialize_value makes of a value json cannot encode itself."""
    if isinstance(value, Enum):
        return value.value
    handler = _HANDLERS.get(type(value))
    if handler is not None:
        return handler(value)
    if isinstance(value, set | frozenset):
        return list(value)
    if isinstance(value, datetime | date | BaseException) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        return serialize_value(value)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return model_dump()
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return str(value)


def to_json(value: Any) -> str:
    """``value`` as JSON text, by the rules of :func:`serialize_value`, in one pass of json's C
    encoder (the recursion in Python costs more than the encoding; this is the broadcast path)."""
    return json.dumps(value, default=_encoder_default, separators=(",", ":"), ensure_ascii=False)


def _record(event: Event, summarize: bool) -> dict[str, Any]:
    record: dict[str, Any] = {"event_type": event.event_type.value}
    for f in dataclasses.fields(event):
        if f.name != "event_type":
            record[f.name] = getattr(event, f.name)
    data = event.data
    if summarize and any(data.get(key) is not None for key in CONSTELLATION_KEYS):
        record["data"] = {
            k: constellation_summary(v) if k in CONSTELLATION_KEYS and v is not None else v
            for k, v in data.items()
        }
    return record


def event_json(event: Event, summarize: bool = False) -> str:
    """:func:`serialize_event` (or, with ``summarize``, :func:`summarize_event`) as JSON text."""
    return to_json(_record(event, summarize))


def serialize_event(event: Event) -> dict[str, Any]:
    """The event flattened: base fields, then every subclass field (``event_type`` as its value)."""
    return {k: serialize_value(v) for k, v in _record(event, summarize=False).items()}


def summarize_event(event: Event) -> dict[str, Any]:
    """Like :func:`serialize_event`, with constellations in ``data`` shrunk to a summary.

    The state snapshot keeps up to 200 events for the event log; full DAG copies in each would be
    megabytes for a large run, and the snapshot carries the current DAG once anyway.
    """
    return {k: serialize_value(v) for k, v in _record(event, summarize=True).items()}
