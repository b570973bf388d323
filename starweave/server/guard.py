"""Connections that have not sent a request yet: bounded in number and in time (slowloris defence).

uvicorn keeps a connection that never sends a complete request head open forever, and counts it
nowhere, so a few thousand idle sockets exhaust the file descriptors and nothing answers any more
(not even /api/health). :class:`PendingConnections` tracks the connections that are *pending*:
opened, or idle after a response, without a complete request head (an HTTP request or a WebSocket
upgrade) yet. Each must complete its head within ``header_timeout``; beyond ``limit`` pending
connections the oldest is closed. A real client sends its request head right after connecting,
so it stays pending for milliseconds and is never the oldest; an attacker's idle sockets are.
Connections serving a request, and WebSocket connections after the upgrade, are not pending.

:func:`guarded_protocol` plugs the tracking into uvicorn's h11 protocol class.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from uvicorn.protocols.http.h11_impl import H11Protocol

from starweave.errors import InvalidArgumentError

__all__ = ["Closable", "PendingConnections", "guarded_protocol"]

logger = logging.getLogger(__name__)

# At most one summary line per this many seconds, however many connections are closed.
REPORT_INTERVAL = 10.0


class Closable(Protocol):
    """A connection the guard can close."""

    def close_pending(self) -> None:
        """Close the connection; it has not sent a complete request head in time."""
        ...


class PendingConnections:
    """Pending connections in the order they became pending, each with the time it did."""

    def __init__(
        self, limit: int, header_timeout: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if limit < 1 or header_timeout <= 0:
            raise InvalidArgumentError("limit must be at least 1 and header_timeout positive")
        self.limit = limit
        self.header_timeout = header_timeout
        self._clock = clock
        # dicts keep insertion order: the first key is always the oldest pending connection.
        self._pending: dict[Closable, float] = {}
        self.evicted = 0
        self.timed_out = 0
        self._reported = (0, 0)
        self._last_report = clock()

    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, conn: object) -> bool:
        return conn in self._pending

    def enter(self, conn: Closable) -> None:
        """``conn`` waits for a request head from now on; closes the oldest beyond the limit."""
        self._pending.pop(conn, None)
        while len(self._pending) >= self.limit:
            oldest = next(iter(self._pending))
            del self._pending[oldest]
            self.evicted += 1
            oldest.close_pending()
        self._pending[conn] = self._clock()

    def leave(self, conn: Closable) -> None:
        """``conn`` sent a request head, upgraded, or closed."""
        self._pending.pop(conn, None)

    def sweep(self) -> int:
        """Close every connection pending longer than ``header_timeout``; returns how many."""
        deadline = self._clock() - self.header_timeout
        closed = 0
        while self._pending:
            conn, since = next(iter(self._pending.items()))
            if since > deadline:
                break
            del self._pending[conn]
            closed += 1
            conn.close_pending()
        self.timed_out += closed
        return closed

    def report(self) -> str | None:
        """A summary of the connections closed since the last report, at most every REPORT_INTERVAL s."""
        now = self._clock()
        if now - self._last_report < REPORT_INTERVAL or (self.timed_out, self.evicted) == self._reported:
            return None
        timed_out = self.timed_out - self._reported[0]
        evicted = self.evicted - self._reported[1]
        self._reported = (self.timed_out, self.evicted)
        self._last_report = now
        return (
            f"closed {timed_out} connection(s) that sent no complete request within "
            f"{self.header_timeout:g}s and {evicted} idle one(s) over the limit of {self.limit} "
            f"pending connections (a flood of idle connections, or a very slow network)"
        )

    async def run(self, interval: float | None = None) -> None:
        """Sweep and report until cancelled."""
        period = interval if interval is not None else max(0.05, min(1.0, self.header_timeout / 4))
        while True:
            await asyncio.sleep(period)
            self.sweep()
            summary = self.report()
            if summary:
                logger.warning("%s", summary)


def guarded_protocol(guard: PendingConnections) -> type[H11Protocol]:
    """uvicorn's h11 protocol, reporting to ``guard`` when a connection is pending and when not."""

    class GuardedH11Protocol(H11Protocol):
        """H11Protocol whose connections are pending until they send a request head."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            guard.enter(self)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._busy_or_gone():
                guard.leave(self)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._busy_or_gone():
                guard.leave(self)
            else:  # keep-alive: idle again until the next request head
                guard.enter(self)

        def connection_lost(self, exc: Exception | None) -> None:
            guard.leave(self)
            super().connection_lost(exc)

        def close_pending(self) -> None:
            self.transport.close()

        def _busy_or_gone(self) -> bool:
            transport: Any = self.transport
            if transport.is_closing() or transport.get_protocol() is not self:  # closed or upgraded
                return True
            return self.cycle is not None and not self.cycle.response_complete

    return GuardedH11Protocol
