"""Starweave reads nothing for the model that a command in the sandbox cannot read: the check of
:mod:`starweave.tools.confine.reach` compared, path by path, with a real ``cat`` in a real
bubblewrap and Landlock sandbox of the same workspace and read roots."""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from starweave.config.models import ShellConfig
from starweave.errors import PolicyViolation
from starweave.tools.confine.paths import PathGuard
from starweave.tools.confine.reach import open_for_model
from starweave.tools.sandbox.choice import probe_bwrap_sync, probe_landlock_sync
from starweave.tools.servers.shell import create_bash_server

AS_ROOT = os.geteuid() == 0
# Read by both sandboxes, and by the check: the converse, so that the check is not simply "no".
ORDINARY = ("/usr/lib/os-release", "/etc/passwd")


@pytest.fixture
def places(tmp_path: Path) -> Iterator[tuple[Path, Path, list[str]]]:
    """A workspace and a read root with ordinary and locked files, and paths all around them."""
    ws, root = tmp_path / "ws", tmp_path / "root"
    ws.mkdir()
    root.mkdir()
    (ws / "notes.txt").write_text("notes\n")
    (root / "shared.txt").write_text("shared\n")
    (tmp_path / "beside.txt").write_text("beside\n")
    locked = ws / "locked.txt"
    locked.write_text("locked\n")
    locked.chmod(0)
    paths = [str(ws / "notes.txt"), str(root / "shared.txt"), str(tmp_path / "beside.txt"), str(locked)]
    paths += [*ORDINARY, "/etc/shadow", "/etc/gshadow", "/root/.bashrc", "/root/.profile", "/proc/meminfo"]
    made: list[Path] = []
    if AS_ROOT:
        theirs = ws / "theirs.txt"
        theirs.write_text("theirs\n")
        theirs.chmod(0o600)
        os.chown(theirs, 12345, 12345)
        paths.append(str(theirs))
        for folder in (Path("/run"), Path("/dev/shm"), Path("/var/tmp")):
            if os.access(folder, os.W_OK):
                made.append(folder / f"starweave-test-{secrets.token_hex(4)}")
                made[-1].mkdir()
                (made[-1] / "report.txt").write_text("report\n")
                paths.append(str(made[-1] / "report.txt"))
    try:
        yield ws, root, paths
    finally:
        for folder in made:
            shutil.rmtree(folder)


def allowed_by_check(guard: PathGuard, path: str) -> bytes | None:
    try:
        _real, fd = open_for_model(guard, path, confined=False)
    except (PolicyViolation, FileNotFoundError):
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


async def sandboxed_reads(kind: str, ws: Path, root: Path, paths: list[str]) -> dict[str, str]:
    """What ``cat`` in the sandbox ``kind`` printed for each path, or "" when it could not read it."""
    config = ShellConfig(workspace=str(ws), read_roots=[str(root)], sandbox=kind, timeout=60, max_timeout=60)
    script = "".join(
        f'if out=$(cat {shlex.quote(p)} 2>/dev/null | base64 -w0) && [ -n "$out" ]; then '
        f'echo "OK {p} $out"; else echo "NO {p}"; fi\n'
        for p in paths
    )
    async with Client(create_bash_server(config)) as client:
        result = await client.call_tool("execute_command", {"command": script, "timeout": 60})
    payload = result.structured_content
    assert isinstance(payload, dict) and payload.get("success"), payload
    seen: dict[str, str] = {}
    for line in str(payload["stdout"]).splitlines():
        word, path, *rest = line.split(" ")
        seen[path] = rest[0] if word == "OK" else ""
    return seen


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
async def test_the_check_never_allows_what_a_sandboxed_cat_cannot_read(
    kind: str, places: tuple[Path, Path, list[str]]
) -> None:
    ok, detail = await asyncio.to_thread(probe_bwrap_sync if kind == "bwrap" else probe_landlock_sync, False)
    if not ok:
        pytest.skip(f"{kind} is not available here: {detail}")
    ws, root, paths = places
    seen = await sandboxed_reads(kind, ws, root, paths)
    assert set(seen) == set(paths)
    guard = PathGuard(str(ws), "workspace", [str(root)])
    for path in paths:
        data = await asyncio.to_thread(allowed_by_check, guard, path)
        if data is not None:
            assert seen[path], f"the check lets Starweave read {path}, which {kind} hides"
            assert base64.b64decode(seen[path]) == data, path
    for path in (str(ws / "notes.txt"), str(root / "shared.txt"), *ORDINARY):
        assert seen[path] and allowed_by_check(guard, path) is not None, path
