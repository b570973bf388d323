"""The File MCP Server, called through a real in-process MCP client."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from starweave.config.models import ShellConfig
from starweave.tools.servers.files import create_file_server


async def _call(config: ShellConfig, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(create_file_server(config)) as client:
        result = await client.call_tool(tool, args)
    assert not result.is_error
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_write_read_list_in_workspace(workspace: Path) -> None:
    config = ShellConfig(workspace=str(workspace))
    written = await _call(config, "write_file", {"path": "new/dir/a.txt", "content": "héllo\n"})
    assert written["success"] and written["bytes_written"] == len("héllo\n".encode())
    assert (workspace / "new/dir/a.txt").read_text() == "héllo\n"
    await _call(config, "write_file", {"path": "new/dir/a.txt", "content": "more\n", "append": True})
    read = await _call(config, "read_file", {"path": "new/dir/a.txt"})
    assert read["success"] and read["content"] == "héllo\nmore\n" and not read["truncated"]
    cut = await _call(config, "read_file", {"path": "notes.txt", "max_bytes": 5})
    assert cut["content"] == "alpha" and cut["truncated"]
    listing = await _call(config, "list_directory", {})
    names = {e["name"]: e["type"] for e in listing["entries"]}
    assert names["new"] == "dir" and names["notes.txt"] == "file" and names["link_out"] == "symlink"


async def test_writes_outside_or_through_symlinks_are_blocked(workspace: Path, tmp_path: Path) -> None:
    config = ShellConfig(workspace=str(workspace))
    for path in ("../escape.txt", "/etc/evil", "link_out/x.txt", "outlink.txt", ".git/hooks/pre-commit"):
        result = await _call(config, "write_file", {"path": path, "content": "x"})
        assert not result["success"] and result["error"].startswith("Blocked:"), path
    assert (tmp_path / "outside" / "target.txt").read_text() == "outside\n"
    assert not (tmp_path / "escape.txt").exists()


async def test_reads_are_confined_to_roots_and_never_sensitive(workspace: Path, tmp_path: Path) -> None:
    config = ShellConfig(workspace=str(workspace))
    for path in ("/etc/hostname", "../outside/target.txt", "/etc/shadow", ".env", "server.pem"):
        result = await _call(config, "read_file", {"path": path})
        assert not result["success"] and "Blocked" in result["error"], path
    with_root = ShellConfig(workspace=str(workspace), read_roots=[str(tmp_path / "outside")])
    ok = await _call(with_root, "read_file", {"path": str(tmp_path / "outside" / "target.txt")})
    assert ok["success"] and ok["content"] == "outside\n"
    missing = await _call(config, "read_file", {"path": "nope.txt"})
    assert not missing["success"] and "does not exist" in missing["error"]


async def test_readonly_mode_refuses_writes(workspace: Path) -> None:
    config = ShellConfig(workspace=str(workspace), mode="readonly")
    result = await _call(config, "write_file", {"path": "a.txt", "content": "x"})
    assert not result["success"] and "readonly" in result["error"]
    assert (await _call(config, "read_file", {"path": "notes.txt"}))["success"]


async def test_read_max_bytes_is_capped_by_max_output_bytes(workspace: Path) -> None:
    config = ShellConfig(workspace=str(workspace), max_output_bytes=1024)
    (workspace / "big.txt").write_text("x" * 5000)
    capped = await _call(config, "read_file", {"path": "big.txt", "max_bytes": 10**9})
    assert len(capped["content"]) == 1024 and capped["truncated"] and capped["size"] == 5000
    assert "1024" in capped["note"]
    small = await _call(config, "read_file", {"path": "big.txt", "max_bytes": 10})
    assert small["content"] == "x" * 10 and small["truncated"] and "note" not in small
    whole = await _call(config, "read_file", {"path": "notes.txt", "max_bytes": 10**9})
    assert whole["content"].startswith("alpha") and not whole["truncated"] and "note" not in whole


async def test_write_refuses_hard_link_without_touching_it(workspace: Path, tmp_path: Path) -> None:
    config = ShellConfig(workspace=str(workspace))
    result = await _call(config, "write_file", {"path": "hard.txt", "content": "x"})
    assert not result["success"] and "hard links" in result["error"]
    assert (tmp_path / "outside" / "target.txt").read_text() == "outside\n"


async def test_special_files_are_never_opened(workspace: Path) -> None:
    os.mkfifo(workspace / "fifo")
    config = ShellConfig(workspace=str(workspace))
    read = await _call(config, "read_file", {"path": "fifo"})
    assert not read["success"] and "FIFO" in read["error"]
    written = await _call(config, "write_file", {"path": "fifo", "content": "x"})
    assert not written["success"] and "FIFO" in written["error"]
    environ = await _call(config, "read_file", {"path": "/proc/self/environ"})
    assert not environ["success"] and "Blocked" in environ["error"]


async def test_files_the_sandbox_cannot_read_are_not_read_listed_or_written(workspace: Path) -> None:
    # What a sandboxed command's permissions refuse (it holds no capability, even as root) is refused
    # to the file tools too, though Starweave itself, as root, could open it.
    locked = workspace / "locked.txt"
    locked.write_text("locked\n")
    locked.chmod(0)
    closed = workspace / "closed"
    closed.mkdir()
    (closed / "inside.txt").write_text("inside\n")
    closed.chmod(0)
    config = ShellConfig(workspace=str(workspace))
    try:
        read = await _call(config, "read_file", {"path": "locked.txt"})
        assert (
            not read["success"]
            and "permission denied" in read["error"]
            and "locked" not in read.get("content", "")
        )
        listing = await _call(config, "list_directory", {"path": "closed"})
        assert not listing["success"] and "permission denied" in listing["error"]
        inner = await _call(config, "read_file", {"path": "closed/inside.txt"})
        assert not inner["success"]
        written = await _call(config, "write_file", {"path": "closed/new.txt", "content": "x"})
        assert not written["success"]
    finally:
        closed.chmod(0o755)
    assert sorted(p.name for p in closed.iterdir()) == ["inside.txt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user")
async def test_another_users_files_in_the_workspace_are_neither_read_nor_written(workspace: Path) -> None:
    theirs = workspace / "theirs.txt"
    theirs.write_text("their secret\n")
    theirs.chmod(0o600)
    os.chown(theirs, 12345, 12345)
    shared = workspace / "shared.txt"
    shared.write_text("read only for us\n")
    shared.chmod(0o644)
    os.chown(shared, 12345, 12345)
    config = ShellConfig(workspace=str(workspace))
    read = await _call(config, "read_file", {"path": "theirs.txt"})
    assert not read["success"] and "Blocked" in read["error"] and "permission denied" in read["error"]
    ok = await _call(config, "read_file", {"path": "shared.txt"})
    assert ok["success"] and ok["content"] == "read only for us\n"
    written = await _call(config, "write_file", {"path": "shared.txt", "content": "changed"})
    assert not written["success"]
    assert shared.read_text() == "read only for us\n"


async def test_links_to_masked_places_are_refused(workspace: Path) -> None:
    # A model's symlink to what the sandbox masks, or to another process's environment.
    os.symlink("/etc/shadow", workspace / "shadow")
    os.symlink("/root", workspace / "roothome")
    os.symlink("/proc/self/environ", workspace / "environ")
    config = ShellConfig(workspace=str(workspace), read_roots=[str(workspace.parent / "outside")])
    for path in ("shadow", "roothome/.bashrc", "environ"):
        result = await _call(config, "read_file", {"path": path})
        assert not result["success"] and result["error"].startswith("Blocked:"), path
    listing = await _call(config, "list_directory", {"path": "roothome"})
    assert not listing["success"] and listing["error"].startswith("Blocked:")


async def test_nul_and_lone_surrogates_get_a_clear_error(workspace: Path) -> None:
    # Before the fix each of these raised inside the tool (ValueError: embedded null byte, or a
    # result pydantic could not serialize): the model saw "Error executing tool" and the log a traceback.
    config = ShellConfig(workspace=str(workspace))
    for tool, args, why in (
        ("read_file", {"path": "notes.txt\0.bak"}, "NUL"),
        ("write_file", {"path": "a\0b", "content": "x"}, "NUL"),
        ("list_directory", {"path": "a\0b"}, "NUL"),
        ("read_file", {"path": "a\udcffb"}, "surrogate"),
        ("write_file", {"path": "made.txt", "content": "x\ud800"}, "surrogate"),
        ("list_directory", {"path": "\udcff"}, "surrogate"),
    ):
        result = await _call(config, tool, args)
        assert result["success"] is False and why in result["error"], (tool, result)
    assert not (workspace / "made.txt").exists()
