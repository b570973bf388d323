"""ConnectionContext back-pressure: at most ``max_inflight`` handler tasks per connection."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, cast

import pytest

from starweave.server.connection import ConnectionContext


async def test_spawn_waits_when_max_inflight_handlers_run() -> None:
    ctx = ConnectionContext(cast(Any, None), max_inflight=2)
    gate = asyncio.Event()
    done: list[int] = []

    async def handler(n: int) -> None:
        await gate.wait()
        done.append(n)

    await ctx.spawn(handler(1))
    await ctx.spawn(handler(2))
    third = asyncio.create_task(ctx.spawn(handler(3)))
    await asyncio.sleep(0.05)
    assert not third.done() and len(ctx.tasks) == 2  # the reader would be waiting here
    gate.set()
    await asyncio.wait_for(third, 30)
    await asyncio.wait_for(asyncio.gather(*ctx.tasks), 30)
    assert sorted(done) == [1, 2, 3]


async def test_cancelled_spawn_closes_its_coroutine() -> None:
    ctx = ConnectionContext(cast(Any, None), max_inflight=1)
    blocker = asyncio.Event()

    async def handler() -> None:
        await blocker.wait()

    await ctx.spawn(handler())
    pending = handler()
    waiting = asyncio.create_task(ctx.spawn(pending))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert inspect.getcoroutinestate(pending) == inspect.CORO_CLOSED  # closed, not left un-awaited
    blocker.set()
