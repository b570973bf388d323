"""Virtual time for heartbeat and watchdog tests: a clock and a sleep that move only when told.

A busy machine can stall the event loop for longer than a 0.1 s heartbeat, so tests that used real
short intervals failed now and then. With VirtualTime, ``advance()`` wakes exactly the sleepers
whose deadline passed, in order; the test then waits for the effect with a generous real deadline.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable

REAL_WAIT = 30.0  # real seconds any expected effect may take, however loaded the machine


class VirtualTime:
    """``clock()`` and ``sleep()`` for code under test; ``advance()`` for the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(0.0, seconds), next(self._order), future))
        try:
            await future
        finally:
            if not future.done():
                future.cancel()

    @property
    def sleeping(self) -> int:
        """Sleepers not woken or cancelled yet."""
        return sum(1 for _, _, future in self._sleepers if not future.done())

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking each due sleeper in deadline order and letting it run."""
        target = self.now + seconds
        while True:
            while self._sleepers and self._sleepers[0][2].done():
                heapq.heappop(self._sleepers)
            if not self._sleepers or self._sleepers[0][0] > target:
                break
            deadline, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, deadline)
            future.set_result(None)
            # Let the woken coroutine run up to its next await (often its next sleep).
            for _ in range(20):
                await asyncio.sleep(0)
        self.now = target

    async def wait_sleepers(self, count: int) -> None:
        """Return once at least ``count`` coroutines sleep on this clock."""
        await until(lambda: self.sleeping >= count)


async def until(predicate: Callable[[], object], what: str = "condition") -> None:
    """Poll ``predicate`` until true, failing after REAL_WAIT real seconds."""
    deadline = time.monotonic() + REAL_WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)
