"""Bounded worker threads for the blocking work of the file server.

File-tool calls read the file system, so they run off the event loop. The loop's default executor
is shared by everything in the process and has only min(32, CPUs + 4) threads: a few calls still
running after their caller gave up would hold every one of them, and every other file-tool call and
device would then wait forever. A :class:`WorkerPool` runs each call on a daemon thread of its own
(idle threads are kept for the next calls: starting one costs more than a small file-tool call), at
most ``size`` at a time in all and ``per_owner`` at a time for one owner (a file server), so one
device's stuck work never reaches another device. A call waits for a free slot only as long as its
caller waits (callers put a deadline around :meth:`WorkerPool.run`).

Threads cannot be killed: the work itself must stop by its deadline (a walk counts what it reads);
the pool only keeps work that overstays from holding up anyone else, and daemon threads never hold
up the exit of the program.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]
MAX_IDLE = 4  # threads kept waiting for work, per pool


class _Worker:
    """A daemon thread that runs the jobs put to it, and parks in its pool between them."""

    def __init__(self, pool: WorkerPool) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._pool = pool
        threading.Thread(target=self._loop, name=pool.name, daemon=True).start()

    def _loop(self) -> None:
        while True:
            self.jobs.get()()
            if not self._pool._park(self):
                return


class WorkerPool:
    """At most ``size`` calls at a time on daemon threads, at most ``per_owner`` for one owner."""

    def __init__(self, name: str, size: int, per_owner: int) -> None:
        self.name, self.size, self.per_owner = name, size, per_owner
        self._lock = threading.Lock()
        self._running = 0
        self._owners: dict[int, int] = {}
        self._waiters: list[_Waiter] = []
        self._idle: list[_Worker] = []

    def running(self, owner: object | None = None) -> int:
        """How many calls run now: in all, or those of ``owner``."""
        with self._lock:
            return self._running if owner is None else self._owners.get(id(owner), 0)

    async def run(self, fn: Callable[..., T], *args: Any, owner: object | None = None) -> T:
        """Run ``fn(*args)`` on a thread of the pool once a slot is free; return (or raise) what it
        did. Cancelling the caller stops the wait, not the thread (it keeps its slot until it ends)."""
        loop = asyncio.get_running_loop()
        key = id(owner)
        while (waiter := self._take_or_wait(key, loop)) is not None:
            try:
                await waiter
            finally:
                with self._lock, contextlib.suppress(ValueError):
                    self._waiters.remove((loop, waiter))
        future: asyncio.Future[T] = loop.create_future()

        def settle(outcome: tuple[bool, Any]) -> None:
            if future.done():
                return  # the caller stopped waiting
            if outcome[0]:
                future.set_result(outcome[1])
            else:
                future.set_exception(outcome[1])

        def work() -> None:
            try:
                outcome: tuple[bool, Any] = (True, fn(*args))
            except BaseException as exc:  # handed to the awaiting coroutine, which re-raises it
                outcome = (False, exc)
            finally:
                self._give_back(key)
            _call_soon(loop, settle, outcome)

        try:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            (worker or _Worker(self)).jobs.put(work)
        except BaseException:
            self._give_back(key)
            raise
        return await future

    def _park(self, worker: _Worker) -> bool:
        """Keep ``worker`` for a later call (True), unless enough threads wait already."""
        with self._lock:
            if len(self._idle) >= MAX_IDLE:
                return False
            self._idle.append(worker)
            return True

    def _take_or_wait(self, key: int, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None] | None:
        """Take a slot (None), or a future that is woken when a slot may have become free."""
        with self._lock:
            if self._running < self.size and self._owners.get(key, 0) < self.per_owner:
                self._running += 1
                self._owners[key] = self._owners.get(key, 0) + 1
                return None
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, waiter))
            return waiter

    def _give_back(self, key: int) -> None:
        with self._lock:
            self._running -= 1
            left = self._owners[key] - 1
            if left:
                self._owners[key] = left
            else:
                del self._owners[key]
            waiters, self._waiters = self._waiters, []
        for loop, waiter in waiters:  # each tries again; those that still find no slot wait again
            _call_soon(loop, _wake, waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[Any], None], arg: Any) -> None:
    # The loop may have closed while the thread worked (the program is exiting): nothing to tell.
    with contextlib.suppress(RuntimeError):
        if not loop.is_closed():
            loop.call_soon_threadsafe(callback, arg)


# Calls of the file tools.
FILE_CALLS = WorkerPool("starweave-files", size=32, per_owner=8)
