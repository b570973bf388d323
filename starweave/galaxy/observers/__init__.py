"""Galaxy observers: agent progress, session metrics, the live terminal view and the event log."""

from .changes import ConstellationChanges, calculate_constellation_changes, format_change_summary
from .live import LiveViewObserver
from .metrics import SessionMetricsObserver
from .progress import CompletionSink, ConstellationProgressObserver
from .serialize import event_to_dict
from .session_log import EVENTS_LOG, SessionLogObserver

__all__ = [
    "EVENTS_LOG",
    "CompletionSink",
    "ConstellationChanges",
    "ConstellationProgressObserver",
    "LiveViewObserver",
    "SessionLogObserver",
    "SessionMetricsObserver",
    "calculate_constellation_changes",
    "event_to_dict",
    "format_change_summary",
]
