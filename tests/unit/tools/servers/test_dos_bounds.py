"""Bounds that keep one hostile input from wedging a device: the worker pool that keeps stuck
file-tool calls away from everyone else, commands that hang or bomb bash's globbing until their
deadline while other sessions and the file tools keep working, and list_directory on a huge folder.
Real files, real threads, real processes and servers; no mocks."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from helpers.shell_sessions import SANDBOXES, run, session_for
from mcp import Client

from starweave.config.models import ShellConfig
from starweave.tools.confine.paths import PathGuard
from starweave.tools.confine.workers import FILE_CALLS, WorkerPool
from starweave.tools.servers.files import MAX_ENTRIES, _list, create_file_server

FOLDERS = 3000
MARGIN = 20.0  # seconds on top of a deadline on a busy 2-core machine


@pytest.fixture(scope="module")
def many_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("many")
    for i in range(FOLDERS):
        os.mkdir(ws / f"d{i}")
    (ws / "d7" / "a").write_text("x\n")
    return ws


# ---- the worker pool --------------------------------------------------------------------------------


async def _stuck(pool: WorkerPool, owner: object, release: threading.Event) -> list[asyncio.Task[Any]]:
    tasks = [asyncio.create_task(pool.run(release.wait, owner=owner)) for _ in range(pool.per_owner)]
    for _ in range(3000):  # up to 30 s: threads start late on a loaded machine
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


@pytest.mark.parametrize("kind", ["none", *SANDBOXES])
async def test_hanging_commands_hold_up_neither_file_tools_nor_another_session(
    kind: str, tmp_path: Path
) -> None:
    ws_a, ws_b = tmp_path / "a", tmp_path / "b"
    hostile, bystander = session_for(kind, ws_a), session_for(kind, ws_b)
    (ws_b / "n.txt").write_text("hi\n")
    release = threading.Event()
    # The hostile device's commands hang (a FIFO nobody writes, a loop) and its file calls are stuck.
    os.mkfifo(ws_a / "fifo")
    hangs = [
        run(hostile, line, limit=3)
        for line in ("cat fifo", "while :; do :; done", "sleep 600", "read x < fifo")
    ]
    stuck = await _stuck(FILE_CALLS, hostile, release)
    started = time.monotonic()
    try:
        pending = asyncio.gather(*hangs)
        ran = await run(bystander, "cat n.txt && echo alive", limit=30)
        assert ran["stdout"] == "hi\nalive\n", ran
        async with Client(create_file_server(ShellConfig(workspace=str(ws_b)))) as client:
            got = await client.call_tool("read_file", {"path": "n.txt"})
        assert isinstance(got.structured_content, dict) and got.structured_content["content"] == "hi\n"
        results = await pending
    finally:
        release.set()
    await asyncio.gather(*stuck)
    assert [r.get("error") for r in results] == ["Timeout after 3s."] * 4, results
    assert time.monotonic() - started < 3 + MARGIN
    assert (await run(hostile, "echo back"))["stdout"] == "back\n"


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_glob_bombs_end_by_their_deadline_and_the_device_keeps_working(
    kind: str, many_dirs: Path
) -> None:
    session = session_for(kind, many_dirs)
    bombs = ["ls -d d*" + "/a" * 30000, "echo d*/*/*/*/*" + "/." * 2000, "echo /*/*/*/*/*/*/*/* | wc -c"]
    started = time.monotonic()
    results = await asyncio.gather(*[run(session, bombs[i % len(bombs)], limit=2) for i in range(9)])
    # bash expands them inside the sandbox: each ends (an error, a result) or is killed at 2 s.
    for result in results:
        assert "exit_code" in result, result
        assert result["exit_code"] is not None or result["error"] == "Timeout after 2s.", result
    assert time.monotonic() - started < 2 + MARGIN
    assert (await run(session, "echo alive", limit=30))["stdout"] == "alive\n"
    plain = await run(session, "ls d*/a; ls -d d12*/ | wc -l", limit=30)
    assert plain["stdout"] == f"d7/a\n{sum(1 for d in os.listdir(many_dirs) if d.startswith('d12'))}\n"


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
