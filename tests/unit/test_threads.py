"""Blocking work on daemon threads never holds up the program's exit."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from starweave.threads import in_daemon_thread


async def test_result_and_exception_reach_the_caller() -> None:
    assert await in_daemon_thread(lambda a, b: a + b, 2, 3) == 5

    def boom() -> None:
        raise EOFError("no input")

    with pytest.raises(EOFError, match="no input"):
        await in_daemon_thread(boom)
    names: list[str] = []
    await in_daemon_thread(lambda: names.append(threading.current_thread().name), name="probe")
    assert names == ["probe"]


def test_interrupted_program_exits_without_waiting_for_the_thread() -> None:
    script = (
        "import asyncio, time\n"
        "from starweave.threads import in_daemon_thread\n"
        "async def main():\n"
        "    task = asyncio.create_task(in_daemon_thread(time.sleep, 30))\n"
        "    await asyncio.sleep(0.2)\n"
        "    task.cancel()\n"
        "asyncio.run(main())\n"
    )
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", script], check=True, timeout=20)
    assert time.monotonic() - start < 10  # asyncio.to_thread would have waited 30 s
