"""Shell sessions under the sandboxes this machine really has, and the process table, for the
shell tests: a session of a sandbox that does not work here skips its test, never fakes it."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.sandbox.choice import probe_bwrap_sync, probe_landlock_sync
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.session import ShellSession

SANDBOXES = ("bwrap", "landlock")  # the two that confine; "none" is unconfined
SETTLE = 30.0  # seconds processes get to disappear on a busy 2-core machine


def probe(kind: str, allow_network: bool = False) -> tuple[bool, str]:
    """Whether sandbox ``kind`` starts a command here (``none`` always does), and why not."""
    if kind == "bwrap":
        return probe_bwrap_sync(allow_network)
    if kind == "landlock":
        return probe_landlock_sync(allow_network)
    return True, ""


def session_for(kind: str, workspace: Path, **config: Any) -> ShellSession:
    """A session of ``workspace`` under ``kind``: ``bwrap``, ``landlock``, ``none`` (SANDBOX none)
    or ``unrestricted`` (MODE unrestricted). Skips the test when that sandbox does not work here."""
    if kind == "unrestricted":
        shell = ShellConfig(workspace=str(workspace), mode="unrestricted", sandbox="none", **config)
        return ShellSession(shell, sandbox="none")
    ok, detail = probe(kind, bool(config.get("allow_network", False)))
    if not ok:
        pytest.skip(f"{kind} does not work here: {detail}")
    return ShellSession(ShellConfig(workspace=str(workspace), sandbox=kind, **config), sandbox=kind)


async def run(
    session: ShellSession, command: str, limit: float = 30, cwd: str | None = None
) -> dict[str, Any]:
    """``run_command`` with a generous default deadline."""
    return await run_command(command, session=session, timeout=limit, cwd=cwd)


def processes_with(marker: str) -> list[int]:
    """The processes whose command line holds ``marker`` (this process excluded)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(pid))
    return found


async def survivors(marker: str, deadline: float = SETTLE) -> list[int]:
    """Processes whose command line holds ``marker`` once they had ``deadline`` seconds to go
    (reaping lags on a loaded machine; a real survivor is still there long after)."""
    end = time.monotonic() + deadline
    while True:
        left = await asyncio.to_thread(processes_with, marker)
        if not left or time.monotonic() > end:
            return left
        await asyncio.sleep(0.2)
