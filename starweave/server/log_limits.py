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

__all__ = ["SERVER_LOGGERS", "RateLimitFilter", "install_rate_limit"]

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
