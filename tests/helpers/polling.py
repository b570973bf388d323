"""Polling for tests that wait on a live desktop or device."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def apoll_until(
    probe: Callable[[], Awaitable[T | None]],
    timeout: float,  # noqa: ASYNC109 - a polling deadline, not a cancellation scope
    interval: float = 0.05,
) -> T | None:
    """Await ``probe`` until it returns something truthy or ``timeout`` passes; returns the last value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await probe()
        if value or loop.time() >= deadline:
            return value
        await asyncio.sleep(interval)
