"""The ConstellationAgent's wait for task results: one batch per review.

Results that arrive together (or within ``batch_window`` seconds of the first) form one batch,
so one review covers them all (spec B §6.6).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starweave.galaxy.constellation import TaskConstellation
from starweave.galaxy.events import Event


async def next_batch(
    queue: asyncio.Queue[Event],
    orchestration: asyncio.Task[Any] | None,
    wait_limit: float,
    batch_window: float,
) -> list[Event]:
    """The queued completion events: waits (at most ``wait_limit`` seconds) for the first, then gathers the
    rest (for ``batch_window`` seconds).

    Returns [] when the orchestration ended and nothing is queued; raises TimeoutError when nothing
    happened within the timeout.
    """
    if queue.empty():
        getter = asyncio.ensure_future(queue.get())
        waiters: set[asyncio.Future[Any]] = {getter}
        if orchestration is not None and not orchestration.done():
            waiters.add(orchestration)
        elif orchestration is not None:
            getter.cancel()
            return []
        done, _ = await asyncio.wait(waiters, timeout=wait_limit, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            events = [getter.result()]
        else:
            getter.cancel()
            if not done:
                raise TimeoutError
            events = []
    else:
        events = [queue.get_nowait()]
    if events:
        # Events published together (or within the window) join this batch: one review for all.
        await asyncio.sleep(batch_window)
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


async def orchestration_over(
    completions: asyncio.Queue[Event],
    orchestration: asyncio.Task[Any] | None,
    before: TaskConstellation,
    after: TaskConstellation,
    wait_limit: float,
) -> bool:
    """Whether the orchestration has ended although the edit left work to do (so it must be
    relaunched). When every task had ended before the edit, the orchestrator is about to report
    completion: wait for that at most ``wait_limit`` seconds. Drains ``completions``."""
    if after.is_complete():
        return False
    completed = not completions.empty()
    if not completed and orchestration is not None and not orchestration.done() and before.is_complete():
        getter = asyncio.ensure_future(completions.get())
        await asyncio.wait({getter, orchestration}, timeout=wait_limit)
        completed = getter.done()
        getter.cancel()
    while not completions.empty():
        completions.get_nowait()
    return completed or (orchestration is not None and orchestration.done())
