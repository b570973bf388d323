"""Every command's limits, for real: a fork bomb, a memory bomb and a huge file stop at the limits,
the command returns within its deadline, and nothing it started is left running afterwards; in
every mode (bubblewrap, Landlock, and no sandbox: MODE unrestricted runs any command line through
the same supervising launcher as SANDBOX none, which the policy would not let run these scripts)."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.servers.shell.policy import ShellPolicy
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.sandbox import probe_bwrap, probe_landlock_sync

KINDS = ["bwrap", "landlock", "unrestricted"]
MARGIN = 20.0  # seconds on top of a command's timeout on a busy 2-core machine


async def _policy(kind: str, ws: Path, **limits: int) -> ShellPolicy:
    if kind == "bwrap":
        ok, detail = await probe_bwrap(False)
    elif kind == "landlock":
        ok, detail = await asyncio.to_thread(probe_landlock_sync, False)
    else:
        return ShellPolicy(ShellConfig(workspace=str(ws), mode="unrestricted", sandbox="none", **limits))
    if not ok:
        pytest.skip(f"{kind} does not work here: {detail}")
    return ShellPolicy(ShellConfig(workspace=str(ws), sandbox=kind, **limits), sandbox=kind)


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(pid))
    return found


async def _none_left(marker: str, deadline: float = 30.0) -> list[int]:
    """Processes whose command line holds ``marker``, once they had ``deadline`` seconds to go."""
    end = time.monotonic() + deadline
    while True:
        left = await asyncio.to_thread(_processes_with, marker)
        if not left or time.monotonic() > end:
            return left
        await asyncio.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
async def test_fork_bomb_stops_at_the_limit_and_ends_at_the_deadline(kind: str, tmp_path: Path) -> None:
    policy = await _policy(kind, tmp_path)
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
    result = await run_command(f"python3 {marker}.py", policy=policy, timeout=5)
    assert time.monotonic() - start < 5 + MARGIN
    assert result["error"] == "Timeout after 5s."
    assert "fork refused after" in result["stdout"]  # the kernel said no before the deadline
    assert await _none_left(marker) == []


@pytest.mark.parametrize("kind", KINDS)
async def test_memory_bomb_gets_memory_error(kind: str, tmp_path: Path) -> None:
    policy = await _policy(kind, tmp_path, max_memory_mb=256)
    (tmp_path / "mem.py").write_text(
        "blocks = []\n"
        "try:\n"
        "    while True:\n"
        "        blocks.append(bytearray(32 * 1024 * 1024))\n"
        "except MemoryError:\n"
        "    print('stopped at', len(blocks) * 32, 'MB')\n"
    )
    result = await run_command("python3 mem.py", policy=policy, timeout=60)
    assert result["exit_code"] == 0, result
    assert int(result["stdout"].split()[2]) <= 256


@pytest.mark.parametrize("kind", KINDS)
async def test_huge_file_stops_at_the_file_size_limit(kind: str, tmp_path: Path) -> None:
    policy = await _policy(kind, tmp_path, max_file_size_mb=4)
    result = await run_command("head -c 20000000 /dev/zero > big.bin", policy=policy, timeout=60)
    if result.get("exit_code") is not None:  # the redirection is opened by Starweave: head is killed
        assert result["exit_code"] != 0
    (tmp_path / "w.py").write_text(
        "try:\n"
        "    open('big2.bin', 'wb').write(b'0' * 20_000_000)\n"
        "except OSError as e:\n"
        "    print('EFBIG', e.errno)\n"
    )
    result = await run_command("python3 w.py", policy=policy, timeout=60)
    assert result["stdout"].startswith("EFBIG 27"), result
    assert (tmp_path / "big2.bin").stat().st_size <= 4 * 1024 * 1024


@pytest.mark.parametrize("kind", KINDS)
async def test_escaped_background_processes_are_killed(kind: str, tmp_path: Path) -> None:
    policy = await _policy(kind, tmp_path)
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
    done = await run_command(f"python3 {marker}.py exit", policy=policy, timeout=30)
    assert done["stdout"] == "left a daemon behind\n", done
    assert await _none_left(marker) == []  # the command ended: so did everything it started
    start = time.monotonic()
    timed_out = await run_command(f"python3 {marker}.py wait", policy=policy, timeout=2)
    assert timed_out["error"] == "Timeout after 2s." and time.monotonic() - start < 2 + MARGIN
    assert await _none_left(marker) == []
