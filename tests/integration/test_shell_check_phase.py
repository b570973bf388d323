"""run_command's check phase for real: it runs off the event loop and within budgets, denial-of-service
inputs end as quick refusals, and the options the policy injects work with the real tools."""

from __future__ import annotations

import asyncio
import io
import os
import stat
import tarfile
import time
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.budget import Budget
from starweave.tools.servers.shell.policy import ShellPolicy
from starweave.tools.servers.shell.runner import run_command


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "notes.txt").write_text("alpha 1\nbeta 2\n")
    return path


def _policy(ws: Path) -> ShellPolicy:
    return ShellPolicy(ShellConfig(workspace=str(ws), sandbox="none"), sandbox="none")


async def _run(policy: ShellPolicy, command: str, limit: float = 30) -> dict:
    return await run_command(command, policy=policy, timeout=limit)


async def test_the_check_does_not_block_the_event_loop(ws: Path) -> None:
    # Without a sandbox an archive is listed before extraction: 9,999 members, then a link that
    # makes the check refuse it, so no process runs and every tick happened during the check.
    with tarfile.open(ws / "big.tar", "w") as tf:
        for n in range(9_999):
            tf.addfile(tarfile.TarInfo(f"d/f{n}"), io.BytesIO(b""))
        link = tarfile.TarInfo("d/zz")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        tf.addfile(link)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        result = await _run(_policy(ws), "tar xf big.tar")
    finally:
        done.set()
        await task
    assert "holds the link 'd/zz'" in result["error"]
    assert ticks > 10  # the loop kept turning while the archive was listed in a worker thread


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("sed -f /dev/zero notes.txt", "never ends"),
        ("sed -f /dev/stdin notes.txt", "standard stream"),
        ("awk -f fifo notes.txt", "FIFO"),
        ("cat < fifo", "FIFO"),
        ("cat fifo", "FIFO"),
        ("echo /*/*/*/*/*/*/*/*", "the pattern"),
    ],
)
async def test_denial_of_service_inputs_end_as_quick_refusals(ws: Path, command: str, reason: str) -> None:
    os.mkfifo(ws / "fifo")
    start = time.monotonic()
    result = await _run(_policy(ws), command, limit=20)
    assert result["success"] is False and result["error"].startswith("Blocked: ")
    assert reason in result["error"]
    assert time.monotonic() - start < 20


def test_the_budget_refuses_after_its_deadline() -> None:
    budget = Budget(deadline=time.monotonic() - 1)
    with pytest.raises(PolicyViolation, match="longer than the command's time limit"):
        budget.spend(1, "the pattern 'x'")
    small = Budget(entries=10)
    with pytest.raises(PolicyViolation, match="more than"):
        small.spend(11, "the pattern 'x'")


async def test_extraction_never_creates_set_id_files(ws: Path) -> None:
    with tarfile.open(ws / "a.tar", "w") as tf:
        info = tarfile.TarInfo("tool")
        data = b"#!/bin/sh\n"
        info.size, info.mode, info.uid, info.gid = len(data), 0o6755, 0, 0
        tf.addfile(info, io.BytesIO(data))
    result = await _run(_policy(ws), "mkdir out && tar xf a.tar -C out")
    assert result["success"], result
    mode = os.stat(ws / "out" / "tool").st_mode
    assert mode & (stat.S_ISUID | stat.S_ISGID) == 0 and mode & stat.S_IXUSR


async def test_recursive_grep_skips_secret_names_for_real(ws: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / ".env").write_text("TOKEN=canary-1\n")
    (ws / "d" / "id_rsa").write_text("TOKEN=canary-2\n")
    (ws / "d" / "a.txt").write_text("TOKEN=public\n")
    result = await _run(_policy(ws), "grep -r TOKEN . && diff -r d d && tar czf t.tgz d && tar tzf t.tgz")
    assert result["success"], result
    assert "public" in result["stdout"] and "canary" not in result["stdout"]
    assert "d/a.txt" in result["stdout"] and ".env" not in result["stdout"]


async def test_sed_runs_sandboxed_and_awk_runs_checked(ws: Path) -> None:
    policy = _policy(ws)
    assert (await _run(policy, "sed -n 's/alpha/A/p' notes.txt"))["stdout"] == "A 1\n"
    assert (await _run(policy, "awk '{ s += $2 } END { print s / 3 }' notes.txt"))["stdout"] == "1\n"
    refused = await _run(policy, "awk 'BEGIN { \"id\" | getline x; print x }'")
    assert refused["error"].startswith("Blocked: awk: the program pipes")


async def test_git_gets_a_closed_configuration_and_planted_configs_are_refused(ws: Path) -> None:
    policy = _policy(ws)
    ok = await _run(policy, "git init -q r && git -C r status --short && echo clean")
    assert ok["success"] and ok["stdout"].endswith("clean\n"), ok
    with tarfile.open(ws / "evil.tar", "w") as tf:
        body = b"[core]\n\tfsmonitor = touch PWNED\n"
        info = tarfile.TarInfo("repo/.git/config")
        info.size = len(body)
        tf.addfile(info, io.BytesIO(body))
    refused = await _run(policy, "tar xf evil.tar")
    assert "configuration or hook file" in refused["error"]  # without a sandbox: never extracted
    # What an extraction under a sandbox (or a copy) could plant is refused when git would run there.
    git_dir = ws / "evil" / ".git"
    git_dir.mkdir(parents=True)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    refused = await _run(policy, "git -C evil status")
    assert "core.fsmonitor" in refused["error"] and not (ws / "evil" / "PWNED").exists()
