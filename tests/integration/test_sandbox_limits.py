"""Every command's limits, for real: a fork bomb, a memory bomb and a huge file stop at the limits,
the command returns within its deadline, and nothing it started is left running afterwards; in
every mode (bubblewrap, Landlock, SANDBOX none and MODE unrestricted: bash through the same
supervising launcher, with no sandbox)."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from pathlib import Path

import pytest
from helpers.shell_sessions import session_for, survivors

from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.session import ShellSession

KINDS = ["bwrap", "landlock", "none", "unrestricted"]
MARGIN = 20.0  # seconds on top of a command's timeout on a busy 2-core machine


async def _session(kind: str, ws: Path, **limits: int) -> ShellSession:
    return await asyncio.to_thread(session_for, kind, ws, **limits)


async def _none_left(marker: str) -> list[int]:
    return await survivors(marker)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
async def test_a_bash_fork_bomb_stops_at_the_limit_and_ends_at_the_deadline(
    kind: str, tmp_path: Path
) -> None:
    if kind == "unrestricted" and os.geteuid() == 0:
        pytest.skip("without a sandbox root is exempt from the process limit (doctor says so)")
    session = await _session(kind, tmp_path, max_processes=64)
    marker = f"bomb{secrets.token_hex(4)}"
    start = time.monotonic()
    result = await run_command(
        f"{marker}() {{ {marker} | {marker} & }}; {marker}; sleep 2; echo {marker}-alive",
        session=session,
        timeout=5,
    )
    assert time.monotonic() - start < 5 + MARGIN, result
    assert "fork" in result["stderr"] or "resource" in result["stderr"].lower(), (
        result
    )  # refused, not the deadline
    assert await _none_left(marker) == []


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
async def test_fork_bomb_stops_at_the_limit_and_ends_at_the_deadline(kind: str, tmp_path: Path) -> None:
    session = await _session(kind, tmp_path)
    marker = "bomb" + secrets.token_hex(4)
    (tmp_path / f"{marker}.py").write_text(
        "import os, sys\n"
        "count = 0\n"
        "while True:\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            count = 0\n"
        "        else:\n"
        "            count += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print('fork refused after', count, flush=True)\n"
        "import time; time.sleep(60)\n"
    )
    if kind == "unrestricted" and os.geteuid() == 0:
        pytest.skip("without a sandbox root is exempt from the process limit (doctor says so)")
    start = time.monotonic()
    result = await run_command(f"python3 {marker}.py", session=session, timeout=5)
    assert time.monotonic() - start < 5 + MARGIN
    assert result["error"] == "Timeout after 5s."
    assert "fork refused after" in result["stdout"]  # the kernel said no before the deadline
    assert await _none_left(marker) == []


@pytest.mark.parametrize("kind", KINDS)
async def test_memory_bomb_gets_memory_error(kind: str, tmp_path: Path) -> None:
    session = await _session(kind, tmp_path, max_memory_mb=256)
    (tmp_path / "mem.py").write_text(
        "blocks = []\n"
        "try:\n"
        "    while True:\n"
        "        blocks.append(bytearray(32 * 1024 * 1024))\n"
        "except MemoryError:\n"
        "    print('stopped at', len(blocks) * 32, 'MB')\n"
    )
    result = await run_command("python3 mem.py", session=session, timeout=60)
    assert result["exit_code"] == 0, result
    assert int(result["stdout"].split()[2]) <= 256


@pytest.mark.parametrize("kind", KINDS)
async def test_huge_file_stops_at_the_file_size_limit(kind: str, tmp_path: Path) -> None:
    session = await _session(kind, tmp_path, max_file_size_mb=4)
    result = await run_command("head -c 20000000 /dev/zero > big.bin", session=session, timeout=60)
    assert result["exit_code"] == 128 + 25, result  # bash opened the file: SIGXFSZ stops head
    assert (tmp_path / "big.bin").stat().st_size == 4 * 1024 * 1024
    (tmp_path / "w.py").write_text(
        "try:\n"
        "    open('big2.bin', 'wb').write(b'0' * 20_000_000)\n"
        "except OSError as e:\n"
        "    print('EFBIG', e.errno)\n"
    )
    result = await run_command("python3 w.py", session=session, timeout=60)
    assert result["stdout"].startswith("EFBIG 27"), result
    assert (tmp_path / "big2.bin").stat().st_size <= 4 * 1024 * 1024


@pytest.mark.parametrize("kind", KINDS)
async def test_escaped_background_processes_are_killed(kind: str, tmp_path: Path) -> None:
    session = await _session(kind, tmp_path)
    marker = "bg" + secrets.token_hex(4)
    # A new session and a double fork: out of the command's process group, orphaned.
    (tmp_path / f"{marker}.py").write_text(
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        devnull = os.open(os.devnull, os.O_RDWR)\n"
        "        for fd in (0, 1, 2):\n"
        "            os.dup2(devnull, fd)\n"
        "        time.sleep(300)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "print('left a daemon behind')\n"
        "if sys.argv[1] == 'wait':\n"
        "    time.sleep(300)\n"
    )
    done = await run_command(f"python3 {marker}.py exit", session=session, timeout=30)
    assert done["stdout"] == "left a daemon behind\n", done
    assert await _none_left(marker) == []  # the command ended: so did everything it started
    start = time.monotonic()
    timed_out = await run_command(f"python3 {marker}.py wait", session=session, timeout=2)
    assert timed_out["error"] == "Timeout after 2s." and time.monotonic() - start < 2 + MARGIN
    assert await _none_left(marker) == []
