"""Keeps a flood of connections from flooding the log.

Per-connection warnings (an invalid HTTP request, a refused WebSocket, a bad frame) are useful one
at a time and useless by the thousand: a flood once grew the server log by 130 MB in 40 s.
:class:`RateLimitFilter` lets ``burst`` records of one kind (logger and message template) through
per ``window`` seconds and counts the rest; the next record of that kind let through says how many
were suppressed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "SERVER_LOGGERS",
    "PeerErrorFilter",
    "RateLimitFilter",
    "install_peer_error_filter",
    "install_rate_limit",
]

# The loggers a peer can make write once per connection or frame.
SERVER_LOGGERS = (
    "uvicorn.error",
    "asyncio",
    "starweave.server.ws_handler",
    "starweave.server.guard",
    "starweave.server.connection",
    "starweave.server.dispatch_queue",
    "starweave.server.sessions",
)
# What uvicorn logs with a traceback although only the peer was wrong (and it already answered:
# a text frame that is not UTF-8 is closed with 1007).
PEER_ERRORS = frozenset({"Invalid UTF-8 sequence received from client."})
# Keys tracked at once; beyond it the table is cleared (a flood of distinct messages stays bounded).
MAX_KINDS = 1024


@dataclass
class _Budget:
    window_start: float
    used: int = 0
    suppressed: int = 0


class RateLimitFilter(logging.Filter):
    """At most ``burst`` records per (logger, message template) per ``window`` seconds."""

    def __init__(
        self, burst: int = 10, window: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self._clock = clock
        self._budgets: dict[tuple[str, str], _Budget] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """True (with a suppression note appended) when the record's kind still has budget."""
        now = self._clock()
        key = (record.name, str(record.msg))
        budget = self._budgets.get(key)
        if budget is None:
            if len(self._budgets) >= MAX_KINDS:
                self._budgets.clear()
            budget = self._budgets[key] = _Budget(now)
        if now - budget.window_start >= self.window:
            budget.window_start, budget.used = now, 0
        if budget.used >= self.burst:
            budget.suppressed += 1
            return False
        budget.used += 1
        if budget.suppressed:
            record.msg = f"{record.msg} ({budget.suppressed} similar message(s) suppressed)"
            budget.suppressed = 0
        return True


def install_rate_limit(
    logger_names: tuple[str, ...] = SERVER_LOGGERS, burst: int = 10, window: float = 10.0
) -> None:
    """Put one RateLimitFilter on each logger (loggers' filters do not apply to their children)."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimitFilter) for f in logger.filters):
            logger.addFilter(RateLimitFilter(burst, window))


class PeerErrorFilter(logging.Filter):
    """Makes a peer's fault that uvicorn logs with a traceback (:data:`PEER_ERRORS`) one warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Always True; a known peer error loses its traceback and becomes a WARNING."""
        if record.exc_info and str(record.msg) in PEER_ERRORS:
            error = record.exc_info[1]
            record.msg = f"{record.msg} ({error}); the connection was closed"
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def install_peer_error_filter(logger_name: str = "uvicorn.error") -> None:
    """Put one PeerErrorFilter on ``logger_name`` (uvicorn.Config keeps a logger's filters)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, PeerErrorFilter) for f in logger.filters):
        logger.addFilter(PeerErrorFilter())
