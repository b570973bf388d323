"""Waiting for the UI: poll a cheap observation until it changes and then stays still, with timeouts.

Actions take effect late (GTK activates a button ~250 ms after an accessible ``click``; dialogs update
their sensitivity asynchronously), so every action waits here instead of sleeping a fixed time.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from starweave.tools.desktop.model import SettlePolicy

T = TypeVar("T")


def fingerprint(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def wait_until_settled(
    observe: Callable[[], bytes],
    policy: SettlePolicy,
    before: str | None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Block until ``observe()`` differs from ``before`` and then is stable for ``policy.quiet`` seconds.

    Returns True when a change was seen. Gives up after ``policy.first_change`` seconds without any
    change and after ``policy.max_wait`` seconds in any case.
    """
    start = clock()
    last = before
    changed = False
    last_change = start
    while True:
        now = clock()
        if now - start >= policy.max_wait:
            return changed
        current = fingerprint(observe())
        now = clock()
        if current != last:
            changed = changed or before is not None
            last = current
            last_change = now
        elif changed and now - last_change >= policy.quiet:
            return True
        if not changed and now - start >= policy.first_change:
            return False
        sleep(policy.poll)


def poll_until(
    probe: Callable[[], T | None],
    timeout: float,
    interval: float = 0.05,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T | None:
    """Call ``probe`` until it returns something truthy or ``timeout`` passes; returns the last value."""
    deadline = clock() + timeout
    while True:
        value = probe()
        if value or clock() >= deadline:
            return value
        sleep(interval)


async def apoll_until(
    probe: Callable[[], Awaitable[T | None]],
    timeout: float,  # noqa: ASYNC109 - a polling deadline, not a cancellation scope
    interval: float = 0.05,
) -> T | None:
    """Async :func:`poll_until` for backend calls (``await backend.get_text(...)`` etc.)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await probe()
        if value or loop.time() >= deadline:
            return value
        await asyncio.sleep(interval)
