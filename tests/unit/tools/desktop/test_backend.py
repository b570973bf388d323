"""The backend worker thread: cancellation reaches the running call, later calls are not blocked,
and the thread never keeps the process alive."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest

from starweave.tools.desktop.backend import WorkerThread


async def test_results_and_errors_come_back() -> None:
    worker = WorkerThread("test-worker")
    assert await worker.run(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        await worker.run(lambda: 1 / 0)
    worker.shutdown()


async def test_a_timed_out_call_is_told_to_stop_and_does_not_block_the_next() -> None:
    worker = WorkerThread("test-worker")
    steps: list[int] = []
    stopped = threading.Event()

    def long_loop() -> None:
        for i in range(10_000):  # 10,000 steps of 10 ms: 100 s unless the cancel flag is honoured
            if worker.cancelled():
                stopped.set()
                return
            steps.append(i)
            time.sleep(0.01)

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(worker.run(long_loop), 0.1)
    started = time.monotonic()
    assert await asyncio.wait_for(worker.run(lambda: "next"), 30) == "next"
    assert time.monotonic() - started < 20.0  # not after the 100 s the loop would take
    assert stopped.is_set() and len(steps) < 2_000  # stopped long before its 10,000 steps
    assert not worker.cancelled()  # the flag belongs to the cancelled call only
    worker.shutdown()


async def test_a_queued_call_cancelled_before_it_starts_never_runs() -> None:
    worker = WorkerThread("test-worker")
    gate, blocking = threading.Event(), threading.Event()

    def block() -> bool:
        blocking.set()
        return gate.wait(60)

    ran: list[str] = []
    blocker = asyncio.ensure_future(worker.run(block))
    queued = asyncio.ensure_future(worker.run(lambda: ran.append("queued")))
    assert await asyncio.to_thread(blocking.wait, 30)  # the worker is busy: queued waits its turn
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    gate.set()
    assert await blocker is True
    assert await worker.run(lambda: "after") == "after" and ran == []
    worker.shutdown()


def test_a_stuck_call_does_not_delay_process_exit() -> None:
    script = (
        "import asyncio, time\n"
        "from starweave.tools.desktop.backend import WorkerThread\n"
        "async def main():\n"
        "    w = WorkerThread('stuck')\n"
        "    try:\n"
        "        await asyncio.wait_for(w.run(time.sleep, 60), 0.1)\n"
        "    except TimeoutError:\n"
        "        print('timed out')\n"
        "    w.shutdown()\n"
        "asyncio.run(main())\n"
    )
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "timed out" in proc.stdout and time.monotonic() - started < 15
