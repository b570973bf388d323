"""AIP resilience (spec A §4): reconnection backoff, heartbeats and timeouts.

Time is injected: ``ReconnectionStrategy`` and ``HeartbeatManager`` take a ``sleep`` coroutine (and
the strategy a ``rand`` source for jitter), so tests drive them with a fake clock instead of waiting.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Coroutine
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from starweave.errors import AIPError, InvalidArgumentError

__all__ = [
    "HeartbeatManager",
    "HeartbeatSender",
    "ReconnectionPolicy",
    "ReconnectionStrategy",
    "Sleep",
    "TimeoutManager",
]

log = logging.getLogger("starweave.aip.resilience")

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


class ReconnectionPolicy(StrEnum):
    """How the wait between reconnection attempts grows."""

    EXPONENTIAL_BACKOFF = "exponential_backoff"
    LINEAR_BACKOFF = "linear_backoff"
    IMMEDIATE = "immediate"
    NONE = "none"


class ReconnectionStrategy:
    """Backoff between reconnection attempts: ``delay(attempt)`` is pure, ``wait(attempt)`` sleeps.

    Attempts count from 1. Exponential: initial·multiplier^(attempt−1) (1, 2, 4, 8 … with the
    defaults); linear: initial·attempt (1, 2, 3 …); immediate: 0. Every delay is capped at
    max_backoff, then spread by ±jitter (a fraction) so many clients restarting together do not
    reconnect in lock-step; the result never exceeds max_backoff. Policy NONE never retries;
    ``max_retries=None`` retries for ever.

    The strategy only says how long to wait and whether to try again; the loops that reconnect
    belong to the connections' owners (DeviceConnector for Galaxy, DeviceWebSocketClient on a device).
    """

    def __init__(
        self,
        max_retries: int | None = 5,
        initial_backoff: float = 1.0,
        max_backoff: float = 60.0,
        backoff_multiplier: float = 2.0,
        policy: ReconnectionPolicy = ReconnectionPolicy.EXPONENTIAL_BACKOFF,
        jitter: float = 0.1,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if max_retries is not None and max_retries < 0:
            raise InvalidArgumentError("max_retries must be 0 or more (or None: for ever)")
        if initial_backoff < 0 or max_backoff < 0:
            raise InvalidArgumentError("backoff times must not be negative")
        if not 0.0 <= jitter < 1.0:
            raise InvalidArgumentError("jitter is a fraction of the delay: 0 <= jitter < 1")
        self.max_retries = max_retries
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.backoff_multiplier = backoff_multiplier
        self.policy = policy
        self.jitter = jitter
        self._sleep = sleep
        self._rand = rand

    def base_delay(self, attempt: int) -> float:
        """The delay before ``attempt`` (1-based) without jitter, capped at max_backoff."""
        if attempt < 1:
            raise InvalidArgumentError("attempts count from 1")
        if self.policy == ReconnectionPolicy.EXPONENTIAL_BACKOFF:
            # Cap the exponent's effect early so large attempt numbers cannot overflow.
            delay = self.initial_backoff
            for _ in range(attempt - 1):
                delay *= self.backoff_multiplier
                if delay >= self.max_backoff:
                    break
        elif self.policy == ReconnectionPolicy.LINEAR_BACKOFF:
            delay = self.initial_backoff * attempt
        else:
            delay = 0.0
        return min(delay, self.max_backoff)

    def delay(self, attempt: int) -> float:
        """The delay before ``attempt`` with jitter applied (within ±jitter, never above max_backoff)."""
        base = self.base_delay(attempt)
        spread = base * self.jitter * (2.0 * self._rand() - 1.0)
        return max(0.0, min(base + spread, self.max_backoff))

    def should_retry(self, attempt: int) -> bool:
        """True if ``attempt`` (1-based, counting the first connection) may still be made."""
        if self.policy == ReconnectionPolicy.NONE:
            return False
        return self.max_retries is None or attempt <= self.max_retries

    async def sleep(self, seconds: float) -> None:
        """Sleep with the injected clock."""
        await self._sleep(seconds)

    async def wait(self, attempt: int) -> float:
        """Sleep for ``delay(attempt)`` and return how long that was."""
        seconds = self.delay(attempt)
        if seconds > 0:
            await self._sleep(seconds)
        return seconds


class HeartbeatSender(Protocol):
    """What HeartbeatManager needs: a HeartbeatProtocol fits."""

    def is_connected(self) -> bool:
        """True while heartbeats can be sent."""
        ...

    async def send_heartbeat(self, client_id: str, metadata: dict[str, Any] | None = None) -> None:
        """Send one heartbeat."""
        ...


class HeartbeatManager:
    """Periodic heartbeats per client id.

    Each loop sleeps first, then sends if the protocol is connected (otherwise it warns and skips).
    A failed send is logged and the loop goes on: detecting a dead connection is the connection
    layer's job, not this manager's.
    """

    def __init__(
        self, protocol: HeartbeatSender, default_interval: float = 30.0, sleep: Sleep = asyncio.sleep
    ):
        if default_interval <= 0:
            raise InvalidArgumentError("the heartbeat interval must be positive")
        self.protocol = protocol
        self.default_interval = default_interval
        self._sleep = sleep
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._intervals: dict[str, float] = {}
        self.sent = 0
        self.failures = 0

    def start_heartbeat(self, client_id: str, interval: float | None = None) -> None:
        """Start (or restart) the heartbeat loop for ``client_id``."""
        self.stop_heartbeat(client_id)
        period = interval if interval is not None else self.default_interval
        if period <= 0:
            raise InvalidArgumentError("the heartbeat interval must be positive")
        self._intervals[client_id] = period
        self._tasks[client_id] = asyncio.create_task(
            self._loop(client_id, period), name=f"heartbeat-{client_id}"
        )
        log.info("Heartbeat loop started for %s (interval: %gs)", client_id, period)

    def stop_heartbeat(self, client_id: str) -> None:
        """Stop the loop of ``client_id`` (no-op if there is none)."""
        task = self._tasks.pop(client_id, None)
        self._intervals.pop(client_id, None)
        if task is not None:
            task.cancel()

    def stop_all(self) -> None:
        """Stop every loop."""
        for client_id in list(self._tasks):
            self.stop_heartbeat(client_id)

    def is_running(self, client_id: str) -> bool:
        """True while the loop of ``client_id`` runs."""
        task = self._tasks.get(client_id)
        return task is not None and not task.done()

    def get_interval(self, client_id: str) -> float | None:
        """The interval of ``client_id``'s loop, None if it has none."""
        return self._intervals.get(client_id)

    async def _loop(self, client_id: str, interval: float) -> None:
        try:
            while True:
                await self._sleep(interval)
                if not self.protocol.is_connected():
                    log.warning("Protocol not connected, skipping heartbeat")
                    continue
                try:
                    await self.protocol.send_heartbeat(client_id)
                    self.sent += 1
                # A failed send (the transport's OSError/ConnectionError, or a middleware's
                # AIPError) is logged and the next heartbeat tried: the manager must not die on a
                # transient error, and disconnects are detected elsewhere.
                except (OSError, AIPError) as exc:
                    self.failures += 1
                    log.warning("Heartbeat for %s failed: %s", client_id, exc or type(exc).__name__)
        except asyncio.CancelledError:
            log.debug("Heartbeat loop cancelled")
            raise


class TimeoutManager:
    """Runs coroutines under a deadline (default 120 s)."""

    def __init__(self, default_timeout: float = 120.0) -> None:
        self.default_timeout = default_timeout

    async def with_timeout(
        self,
        coro: Coroutine[Any, Any, T],
        timeout: float | None = None,  # noqa: ASYNC109 (the reference's API)
        operation_name: str = "operation",
    ) -> T:
        """Await ``coro``; TimeoutError (asyncio.TimeoutError) naming the operation if it takes too long."""
        limit = self.default_timeout if timeout is None else timeout
        try:
            return await asyncio.wait_for(coro, limit)
        except TimeoutError:
            log.warning("%s timed out after %gs", operation_name, limit)
            raise TimeoutError(f"{operation_name} timed out after {limit:g}s") from None
