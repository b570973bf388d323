"""Bounds that keep one hostile input from wedging a device: glob expansion that builds paths,
the check pool that keeps stuck checks away from everyone else, and list_directory on a huge folder.
Real files, real threads, real policies and servers; no mocks."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from starweave.config.models import ShellConfig
from starweave.errors import PolicyViolation
from starweave.tools.servers.files import MAX_ENTRIES, _list, create_file_server
from starweave.tools.servers.shell.budget import MAX_ARGV_BYTES, Budget
from starweave.tools.servers.shell.checkpool import CHECKS, WorkerPool
from starweave.tools.servers.shell.globbing import bounded_glob
from starweave.tools.servers.shell.parser import expand_command, parse_command_line
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.policy import ShellPolicy
from starweave.tools.servers.shell.runner import run_command

FOLDERS = 3000


@pytest.fixture(scope="module")
def many_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("many")
    for i in range(FOLDERS):
        os.mkdir(ws / f"d{i}")
    (ws / "d7" / "a").write_text("x\n")
    return ws


def _expand(command: str, cwd: Path, seconds: float = 2.0) -> list[str]:
    raw = parse_command_line(command).pipelines[0].commands[0]
    return expand_command(raw, cwd=str(cwd), workspace=str(cwd), budget=Budget.for_seconds(seconds)).argv


def test_literal_tail_after_a_glob_is_refused_at_once(many_dirs: Path) -> None:
    for command in ("ls -d d*" + "/a" * 30000, "cat < d*" + "/." * 30000):
        started = time.monotonic()
        with pytest.raises(PolicyViolation, match="longer than 4095 bytes") as info:
            _expand(command, many_dirs)
        assert time.monotonic() - started < 1.0
        assert len(str(info.value)) < 300  # the pattern is quoted shortened, not 60,000 characters


def test_expansion_bytes_are_capped_while_it_is_built(many_dirs: Path) -> None:
    # 3000 paths of ~400 bytes: each is fine, together they pass MAX_ARGV_BYTES.
    with pytest.raises(PolicyViolation, match=f"more than {MAX_ARGV_BYTES} bytes of file names"):
        _expand("ls -d d*" + "/." * 200, many_dirs)


def test_a_spent_deadline_stops_the_expansion(many_dirs: Path) -> None:
    with pytest.raises(PolicyViolation, match="took longer than"):
        bounded_glob("d*/a", str(many_dirs), Budget(deadline=time.monotonic() - 1), "d*/a")


def test_plain_parts_after_a_glob_still_match_like_glob(many_dirs: Path) -> None:
    assert _expand("ls d*/a", many_dirs) == ["ls", "d7/a"]
    assert _expand("ls d*/./a", many_dirs) == ["ls", "d7/./a"]
    assert _expand("ls d*//a", many_dirs) == ["ls", "d7/a"]
    assert _expand("ls d*/zz", many_dirs) == ["ls", "d*/zz"]  # no match keeps the word
    assert _expand("ls -d d12*/", many_dirs) == [
        "ls",
        "-d",
        *sorted(f"{d}/" for d in os.listdir(many_dirs) if d.startswith("d12")),
    ]
    assert _expand(f"ls {many_dirs}/d7/*", many_dirs) == ["ls", f"{many_dirs}/d7/a"]


# ---- the check pool ---------------------------------------------------------------------------------


async def _stuck(pool: WorkerPool, owner: object, release: threading.Event) -> list[asyncio.Task[Any]]:
    tasks = [asyncio.create_task(pool.run(release.wait, owner=owner)) for _ in range(pool.per_owner)]
    for _ in range(200):
        if pool.running(owner) == pool.per_owner:
            break
        await asyncio.sleep(0.01)
    assert pool.running(owner) == pool.per_owner
    return tasks


async def test_pool_keeps_one_owners_stuck_work_from_the_others() -> None:
    pool = WorkerPool("test-pool", size=4, per_owner=2)
    hostile, other, release = object(), object(), threading.Event()
    stuck = await _stuck(pool, hostile, release)
    try:
        assert await asyncio.wait_for(pool.run(lambda: "done", owner=other), 2) == "done"
        with pytest.raises(TimeoutError):  # the hostile owner waits for its own threads
            await asyncio.wait_for(pool.run(lambda: "late", owner=hostile), 0.3)
        with pytest.raises(ZeroDivisionError):  # errors come back to the caller
            await pool.run(lambda: 1 / 0, owner=other)
    finally:
        release.set()
    await asyncio.gather(*stuck)
    assert await asyncio.wait_for(pool.run(lambda: "free", owner=hostile), 2) == "free"
    assert pool.running() == 0


async def test_stuck_checks_hold_up_neither_file_tools_nor_another_device(tmp_path: Path) -> None:
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    hostile = ShellPolicy(ShellConfig(workspace=str(ws_a)))
    bystander = ShellPolicy(ShellConfig(workspace=str(ws_b)))
    (ws_b / "n.txt").write_text("hi\n")
    release = threading.Event()
    stuck = await _stuck(CHECKS, hostile, release)  # as many overstaying checks as it may have
    try:
        started = time.monotonic()
        blocked = await run_command("echo hi", policy=hostile, timeout=1)
        assert blocked["error"].startswith("Timeout after 1s. (while checking the command")
        assert "earlier checks are still running" in blocked["error"]
        assert time.monotonic() - started < 3
        ran = await run_command("cat n.txt && echo alive", policy=bystander, timeout=10)
        assert ran["stdout"] == "hi\nalive\n"
        async with Client(create_file_server(ShellConfig(workspace=str(ws_b)))) as client:
            got = await client.call_tool("read_file", {"path": "n.txt"})
        assert isinstance(got.structured_content, dict) and got.structured_content["content"] == "hi\n"
    finally:
        release.set()
    await asyncio.gather(*stuck)
    assert (await run_command("echo back", policy=hostile, timeout=10))["stdout"] == "back\n"


async def test_glob_tail_bombs_end_by_their_deadline_and_the_device_keeps_working(many_dirs: Path) -> None:
    policy = ShellPolicy(ShellConfig(workspace=str(many_dirs)))
    started = time.monotonic()
    results = await asyncio.gather(
        *[run_command("ls -d d*" + "/a" * 30000, policy=policy, timeout=2) for _ in range(10)]
    )
    # Refused, or (those that waited for one of the device's check threads on a loaded machine)
    # timed out while checking: either way within the deadline, never "Failed to check".
    errors = [r["error"] for r in results]
    assert all(e.startswith(("Blocked:", "Timeout after 2s. (while checking")) for e in errors), errors
    assert any(e.startswith("Blocked:") for e in errors), errors
    assert time.monotonic() - started < 5
    assert (await run_command("echo alive", policy=policy, timeout=5))["stdout"] == "alive\n"


# ---- list_directory --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("big")
    pad = "x" * 200
    for i in range(50_000):
        os.close(os.open(ws / f"{pad}{49_999 - i:06d}", os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkdir(ws / "0dir")
    return ws


def test_list_directory_keeps_the_first_names_and_counts_the_rest(big_folder: Path) -> None:
    guard = PathGuard(str(big_folder), "workspace", [])
    tracemalloc.start()
    try:
        started = time.monotonic()
        listing = _list(guard, ".")
        took = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    names = [e["name"] for e in listing["entries"]]
    assert len(names) == MAX_ENTRIES and names == sorted(os.listdir(big_folder))[:MAX_ENTRIES]
    assert listing["entries"][0] == {
        "name": "0dir",
        "type": "dir",
        "size": os.lstat(big_folder / "0dir").st_size,
    }
    assert listing["total"] == 50_001 and listing["truncated"] and "note" not in listing
    assert took < 5
    assert peak < 3 << 20  # about 1,000 names held, not 50,000 (those alone would be over 10 MiB)


def test_list_directory_says_at_least_when_the_count_is_cut(big_folder: Path) -> None:
    listing = _list(PathGuard(str(big_folder), "workspace", []), ".", 0.0)
    assert listing["success"] and listing["truncated"] and len(listing["entries"]) == MAX_ENTRIES
    assert 0 < listing["total"] < 50_001
    assert f"at least {listing['total']} entries" in listing["note"]


async def test_list_directory_tool_reports_the_total(big_folder: Path) -> None:
    async with Client(create_file_server(ShellConfig(workspace=str(big_folder)))) as client:
        result = await client.call_tool("list_directory", {})
    data = result.structured_content
    assert isinstance(data, dict) and data["success"] and data["total"] == 50_001
    assert len(data["entries"]) == MAX_ENTRIES
