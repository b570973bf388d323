"""Galaxy reports from a log folder: trajectory markdown, Gantt chart, result.json."""

from .gantt import gantt_chart, timings_from_constellation, timings_from_events
from .loading import read_jsonl
from .result import RESULT_FILE, build_result, write_result_json
from .trajectory import (
    EVALUATION_LOG,
    FINAL_CONSTELLATION_FILE,
    OUTPUT_FILE,
    RESPONSE_LOG,
    GalaxyTrajectory,
    build_trajectory_markdown,
)
from .types import SessionSummary, TaskTiming
from .writer import ReportPaths, write_reports, write_reports_async

__all__ = [
    "EVALUATION_LOG",
    "FINAL_CONSTELLATION_FILE",
    "OUTPUT_FILE",
    "RESPONSE_LOG",
    "RESULT_FILE",
    "GalaxyTrajectory",
    "ReportPaths",
    "SessionSummary",
    "TaskTiming",
    "build_result",
    "build_trajectory_markdown",
    "gantt_chart",
    "read_jsonl",
    "timings_from_constellation",
    "timings_from_events",
    "write_reports",
    "write_reports_async",
    "write_result_json",
]
