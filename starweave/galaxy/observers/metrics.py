"""SessionMetricsObserver: the reference's session metrics (spec B §8.1, E §10.4).

Raw counters and timings are updated per event; ``get_metrics()`` adds the computed
``task_statistics``, ``constellation_statistics`` and ``modification_statistics``.

Deliberate fixes to the reference (documented so result.json readers are not surprised):
- CONSTELLATION_FAILED increments ``failed_constellations`` and records end time and duration
  (the reference declared the counter but never touched it);
- ``total_constellation_time`` sums the durations of finished constellations (always 0.0 there);
- a failed task also gets its ``end`` time, and a task that ends without a TASK_STARTED (e.g. it
  never reached a device) is counted without a duration instead of being lost;
- ``modification_types_breakdown`` counts the detected change kind (``tasks_added``...), falling
  back to the event's ``modification_type`` when no change could be computed.
"""

from __future__ import annotations

import copy
import logging
from collections import Counter
from typing import Any

from starweave.galaxy.events import ConstellationEvent, Event, EventType, TaskEvent

from .changes import calculate_constellation_changes

log = logging.getLogger("starweave.galaxy.observers.metrics")


def _statistics(constellation: Any) -> dict[str, Any]:
    """``constellation.get_statistics()``, or {} when the payload carries no constellation."""
    if constellation is None or not hasattr(constellation, "get_statistics"):
        return {}
    stats: dict[str, Any] = constellation.get_statistics()
    return stats


def _constellation_id(event: Event) -> str:
    if isinstance(event, ConstellationEvent) and event.constellation_id:
        return event.constellation_id
    for key in ("constellation", "new_constellation"):
        value = event.data.get(key)
        if value is not None and getattr(value, "constellation_id", None):
            return str(value.constellation_id)
    return str(event.data.get("constellation_id") or "unknown")


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0


def _durations(noun: str, durations: list[float]) -> dict[str, float]:
    """``average_/min_/max_<noun>_duration`` (0.0 without any duration)."""
    return {
        f"average_{noun}_duration": sum(durations) / len(durations) if durations else 0.0,
        f"min_{noun}_duration": min(durations, default=0.0),
        f"max_{noun}_duration": max(durations, default=0.0),
    }


class SessionMetricsObserver:
    """Collects task, constellation and modification metrics of one Galaxy session."""

    def __init__(self, session_id: str, logger: logging.Logger | None = None) -> None:
        self.logger = logger or log
        self.metrics: dict[str, Any] = {
            "session_id": session_id,
            "task_count": 0,
            "completed_tasks": 0,
            "failed_tasks": 0,
            "total_execution_time": 0.0,
            "task_timings": {},
            "constellation_count": 0,
            "completed_constellations": 0,
            "failed_constellations": 0,
            "total_constellation_time": 0.0,
            "constellation_timings": {},
            "constellation_modifications": {},
        }

    async def on_event(self, event: Event) -> None:
        """Update the metrics for one event (other event types are ignored)."""
        handler = {
            EventType.TASK_STARTED: self._task_started,
            EventType.TASK_COMPLETED: self._task_ended,
            EventType.TASK_FAILED: self._task_ended,
            EventType.CONSTELLATION_STARTED: self._constellation_started,
            EventType.CONSTELLATION_COMPLETED: self._constellation_ended,
            EventType.CONSTELLATION_FAILED: self._constellation_ended,
            EventType.CONSTELLATION_MODIFIED: self._constellation_modified,
        }.get(event.event_type)
        if handler is not None:
            handler(event)

    # ------------------------------------------------------------------ tasks
    def _task_started(self, event: Event) -> None:
        task_id = event.task_id if isinstance(event, TaskEvent) else str(event.data.get("task_id"))
        self.metrics["task_count"] += 1
        self.metrics["task_timings"][task_id] = {"start": event.timestamp}

    def _task_ended(self, event: Event) -> None:
        task_id = event.task_id if isinstance(event, TaskEvent) else str(event.data.get("task_id"))
        key = "completed_tasks" if event.event_type is EventType.TASK_COMPLETED else "failed_tasks"
        self.metrics[key] += 1
        timing = self.metrics["task_timings"].get(task_id)
        if timing is None:
            self.logger.debug("Task %s ended without a recorded start; no duration", task_id)
            self.metrics["task_timings"][task_id] = {"end": event.timestamp}
            return
        duration = event.timestamp - timing["start"]
        timing.update(end=event.timestamp, duration=duration)
        self.metrics["total_execution_time"] += duration

    # ------------------------------------------------------------------ constellations
    def _constellation_started(self, event: Event) -> None:
        self.metrics["constellation_count"] += 1
        self.metrics["constellation_timings"][_constellation_id(event)] = {
            "start_time": event.timestamp,
            "initial_statistics": _statistics(event.data.get("constellation")),
            "processing_start_time": event.data.get("processing_start_time"),
            "processing_end_time": event.data.get("processing_end_time"),
            "processing_duration": event.data.get("processing_duration"),
        }

    def _constellation_ended(self, event: Event) -> None:
        completed = event.event_type is EventType.CONSTELLATION_COMPLETED
        self.metrics["completed_constellations" if completed else "failed_constellations"] += 1
        timing = self.metrics["constellation_timings"].setdefault(_constellation_id(event), {})
        start = timing.get("start_time")
        duration = event.timestamp - start if start is not None else None
        timing.update(
            end_time=event.timestamp,
            duration=duration,
            final_statistics=_statistics(event.data.get("constellation")),
        )
        if not completed:
            timing["error"] = str(event.data.get("error")) if event.data.get("error") is not None else None
        if duration is not None:
            self.metrics["total_constellation_time"] += duration

    def _constellation_modified(self, event: Event) -> None:
        old = event.data.get("old_constellation")
        new = event.data.get("new_constellation")
        changes = calculate_constellation_changes(old, new) if old is not None and new is not None else None
        record = {
            "timestamp": event.timestamp,
            "modification_type": event.data.get("modification_type", "unknown"),
            "on_task_id": event.data.get("on_task_id", []),
            "changes": changes,
            "new_statistics": _statistics(new),
            "processing_start_time": event.data.get("processing_start_time"),
            "processing_end_time": event.data.get("processing_end_time"),
            "processing_duration": event.data.get("processing_duration"),
        }
        self.metrics["constellation_modifications"].setdefault(_constellation_id(event), []).append(record)

    # ------------------------------------------------------------------ computed statistics
    def _task_statistics(self) -> dict[str, Any]:
        m = self.metrics
        durations = [t["duration"] for t in m["task_timings"].values() if "duration" in t]
        total = m["task_count"]
        return {
            "total_tasks": total,
            "completed_tasks": m["completed_tasks"],
            "failed_tasks": m["failed_tasks"],
            "success_rate": _ratio(m["completed_tasks"], total),
            "failure_rate": _ratio(m["failed_tasks"], total),
            **_durations("task", durations),
            "total_task_execution_time": m["total_execution_time"],
        }

    def _constellation_statistics(self) -> dict[str, Any]:
        m = self.metrics
        timings = m["constellation_timings"].values()
        durations = [t["duration"] for t in timings if t.get("duration") is not None]
        total = m["constellation_count"]
        return {
            "total_constellations": total,
            "completed_constellations": m["completed_constellations"],
            "failed_constellations": m["failed_constellations"],
            "success_rate": _ratio(m["completed_constellations"], total),
            **_durations("constellation", durations),
            "total_constellation_time": m["total_constellation_time"],
            "average_tasks_per_constellation": _ratio(m["task_count"], total),
        }

    def _modification_statistics(self) -> dict[str, Any]:
        mods: dict[str, list[dict[str, Any]]] = self.metrics["constellation_modifications"]
        per = {cid: len(records) for cid, records in mods.items()}
        total = sum(per.values())
        kinds: Counter[str] = Counter()
        for records in mods.values():
            for record in records:
                changes = record.get("changes")
                kinds[changes["modification_type"] if changes else str(record["modification_type"])] += 1
        return {
            "total_modifications": total,
            "constellations_modified": len(per),
            "average_modifications_per_constellation": _ratio(total, len(per)),
            "max_modifications_for_single_constellation": max(per.values(), default=0),
            "most_modified_constellation": max(per, key=lambda cid: per[cid]) if per else None,
            "modifications_per_constellation": per,
            "modification_types_breakdown": dict(kinds),
        }

    def get_metrics(self) -> dict[str, Any]:
        """A copy of the raw metrics plus the three computed statistics blocks."""
        metrics = copy.deepcopy(self.metrics)
        metrics["task_statistics"] = self._task_statistics()
        metrics["constellation_statistics"] = self._constellation_statistics()
        metrics["modification_statistics"] = self._modification_statistics()
        return metrics
