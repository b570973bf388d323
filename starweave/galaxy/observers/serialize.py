"""JSON form of events for logs: constellations shrink to a summary unless asked for in full."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_core import to_jsonable_python

from starweave.galaxy.events import Event


def constellation_summary(constellation: Any) -> dict[str, Any]:
    """``{constellation_id, name, state, task_count, dependency_count}`` of a TaskConstellation."""
    state = getattr(constellation, "state", None)
    return {
        "constellation_id": getattr(constellation, "constellation_id", None),
        "name": getattr(constellation, "name", None),
        "state": getattr(state, "value", state),
        "task_count": getattr(constellation, "task_count", None),
        "dependency_count": getattr(constellation, "dependency_count", None),
    }


def to_jsonable(value: Any, full_constellations: bool = False) -> Any:
    """A JSON-compatible copy of ``value``: exceptions become ``"Type: message"``, constellations
    a summary (or their full ``to_dict()``), anything unknown its ``str()``."""

    def fallback(obj: Any) -> Any:
        if isinstance(obj, BaseException):
            return f"{type(obj).__name__}: {obj}"
        if hasattr(obj, "constellation_id") and hasattr(obj, "to_dict"):
            return obj.to_dict() if full_constellations else constellation_summary(obj)
        if hasattr(obj, "to_dict"):
            return obj.to_dict()
        return str(obj)

    return to_jsonable_python(value, fallback=fallback)


def event_to_dict(event: Event, full_constellations: bool = False) -> dict[str, Any]:
    """Every field of the event (subclass fields included) as JSON-compatible data."""
    record: dict[str, Any] = {"event_type": event.event_type.value, "event_class": type(event).__name__}
    for f in dataclasses.fields(event):
        if f.name == "event_type":
            continue
        record[f.name] = to_jsonable(getattr(event, f.name), full_constellations)
    return record
