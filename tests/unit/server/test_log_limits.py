"""The rate limit on per-connection log messages."""

from __future__ import annotations

import logging

from starweave.server.log_limits import RateLimitFilter, install_rate_limit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(msg: str, name: str = "uvicorn.error", *args: object) -> logging.LogRecord:
    return logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args, None)


def test_a_burst_passes_then_the_rest_is_counted_and_reported() -> None:
    clock = Clock()
    limit = RateLimitFilter(burst=3, window=10.0, clock=clock)
    passed = [limit.filter(_record("Invalid HTTP request received.")) for _ in range(1000)]
    assert passed.count(True) == 3
    clock.now = 10.5
    record = _record("Invalid HTTP request received.")
    assert limit.filter(record)
    assert record.getMessage() == "Invalid HTTP request received. (997 similar message(s) suppressed)"


def test_kinds_are_counted_apart_by_template_and_logger() -> None:
    limit = RateLimitFilter(burst=1, window=10.0, clock=Clock())
    assert limit.filter(_record("[WS] refused connection: %s", "starweave.server.ws_handler", "a"))
    assert not limit.filter(_record("[WS] refused connection: %s", "starweave.server.ws_handler", "b"))
    assert limit.filter(_record("[WS] registration refused: %s", "starweave.server.ws_handler", "c"))
    assert limit.filter(_record("[WS] refused connection: %s", "uvicorn.error", "d"))


def test_many_distinct_messages_keep_the_table_bounded() -> None:
    limit = RateLimitFilter(burst=1, window=10.0, clock=Clock())
    for i in range(5000):
        limit.filter(_record(f"message {i}"))
    assert len(limit._budgets) <= 1024


def test_install_is_idempotent() -> None:
    install_rate_limit(("starweave.test.limits",))
    install_rate_limit(("starweave.test.limits",))
    filters = logging.getLogger("starweave.test.limits").filters
    assert sum(isinstance(f, RateLimitFilter) for f in filters) == 1
