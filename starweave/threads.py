"""Blocking work on daemon threads.

``asyncio.to_thread`` uses the loop's default executor, and ``asyncio.run`` waits for that
executor's threads before it returns: a program interrupted with Ctrl+C during a minute-long model
call, or while waiting at an ``input()`` prompt, would hang until that call returned. Work started
with :func:`in_daemon_thread` never holds up the exit.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_daemon_thread(fn: Callable[..., T], *args: Any, name: str = "starweave-worker") -> T:
    """Run ``fn(*args)`` on a new daemon thread and await its result (or its exception)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle_result(value: T) -> None:
        if not future.done():
            future.set_result(value)

    def settle_error(error: BaseException) -> None:
        if not future.done():
            future.set_exception(error)

    def work() -> None:
        try:
            value = fn(*args)
        except BaseException as exc:  # handed to the awaiting coroutine, which re-raises it
            _call_soon(loop, settle_error, exc)
        else:
            _call_soon(loop, settle_result, value)

    threading.Thread(target=work, name=name, daemon=True).start()
    return await future


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[Any], None], arg: Any) -> None:
    # The loop may have closed while the thread worked (the program is exiting): nothing to tell.
    if not loop.is_closed():
        loop.call_soon_threadsafe(callback, arg)
