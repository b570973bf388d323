"""EventSerializer (spec B §9): bus events as the flat JSON the page reads.

``serialize_event`` flattens an event into ``{event_type, source_id, timestamp, data, <subclass
fields>}``; ``serialize_value`` turns any payload value into JSON-compatible data following the
reference's chain: primitives, datetimes (ISO), dicts/lists/tuples recursively, the registered
handlers (TaskConstellation, TaskStar, TaskStarLine: their JSON form), dataclasses, Pydantic
models, ``to_dict()``, and finally ``str()``. Exceptions become ``"Type: message"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date, datetime
from enum import Enum
from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.constellation.serialization import to_jsonable
from starweave.galaxy.events import Event
from starweave.galaxy.observers.serialize import constellation_summary

__all__ = ["CONSTELLATION_KEYS", "serialize_event", "serialize_value", "summarize_event"]

# Payload keys that may hold a whole constellation (orchestrator and agent events).
CONSTELLATION_KEYS = ("constellation", "new_constellation", "old_constellation", "updated_constellation")

_HANDLERS: dict[type, Callable[[Any], Any]] = {
    TaskConstellation: lambda c: c.to_dict(),
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


def serialize_event(event: Event) -> dict[str, Any]:
    """The event flattened: base fields, then every subclass field (``event_type`` as its value)."""
    record: dict[str, Any] = {"event_type": event.event_type.value}
    for f in dataclasses.fields(event):
        if f.name != "event_type":
            record[f.name] = serialize_value(getattr(event, f.name))
    return record


def summarize_event(event: Event) -> dict[str, Any]:
    """Like :func:`serialize_event`, with constellations in ``data`` shrunk to a summary.

    The state snapshot keeps up to 200 events for the event log; full DAG copies in each would be
    megabytes for a large run, and the snapshot carries the current DAG once anyway.
    """
    data = event.data
    if any(data.get(key) is not None for key in CONSTELLATION_KEYS):
        shrunk = {
            k: constellation_summary(v) if k in CONSTELLATION_KEYS and v is not None else v
            for k, v in data.items()
        }
        event = dataclasses.replace(event, data=shrunk)
    return serialize_event(event)
