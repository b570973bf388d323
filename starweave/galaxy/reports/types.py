"""The inputs of the reports: what the Galaxy session writes or hands over.

- :class:`ResponseLogLine`: one line of ``response.log`` (JSON lines, one per agent step, spec B §8.4);
- :class:`SessionSummary`: what the session knows at the end, turned into ``result.json`` (§8.3);
- :class:`TaskTiming`: one bar of the Gantt chart (built from ``events.log`` or a constellation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict


class ResponseLogLine(TypedDict, total=False):
    """One agent step in ``response.log`` (every key optional: old or partial logs still load).

    ``constellation_before``/``constellation_after`` are ``TaskConstellation.to_json()`` strings
    (a dict is accepted too); ``device_info`` maps device id to ``AgentProfile.to_dict()`` (a list
    of such dicts is accepted too). ``action`` is the list of tool calls of the step.
    """

    request: str
    agent_name: str
    agent_type: str
    status: str
    round_num: int
    round_step: int
    total_time: float
    cost: float
    execution_times: dict[str, float]
    action: list[dict[str, Any]]
    thought: str
    constellation_before: str | dict[str, Any] | None
    constellation_after: str | dict[str, Any] | None
    device_info: dict[str, dict[str, Any]] | list[dict[str, Any]]


@dataclass
class SessionSummary:
    """The end state of a Galaxy session, from which ``result.json`` is built.

    ``start_time``/``end_time`` are epoch seconds. ``status`` is the run's outcome ("completed",
    "failed", "timeout", "cancelled"); ``agent_status`` the ConstellationAgent's final status
    ("FINISH", "FAIL", "PENDING"...). ``final_constellation`` is the TaskConstellation (or its
    ``to_dict()``) at the end; ``metrics`` is ``SessionMetricsObserver.get_metrics()``.
    """

    session_name: str
    request: str
    task_name: str
    status: str
    start_time: float
    end_time: float
    rounds: int = 1
    trajectory_path: str = ""
    agent_status: str = "PENDING"
    final_results: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    final_constellation: Any = None
    total_execution_time: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def execution_time(self) -> float:
        """Wall-clock seconds of the session."""
        return max(0.0, self.end_time - self.start_time)


@dataclass
class TaskTiming:
    """When one task ran and where (epoch seconds; ``end`` None while still running)."""

    task_id: str
    start: float
    end: float | None
    device_id: str | None = None
    name: str | None = None
    status: str = "completed"
