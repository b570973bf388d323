"""TextEditorExecutor on real files, through a real in-process MCP client."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from starweave.config.models import ShellConfig
from starweave.errors import PolicyViolation
from starweave.tools.confine.paths import PathGuard
from starweave.tools.servers.desktop import create_text_editor_server
from starweave.tools.servers.desktop.editor_api import load_document


async def _ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error and isinstance(result.structured_content, dict)
    data = result.structured_content
    assert data["success"], data
    return data


async def _refused(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert not result.is_error and isinstance(result.structured_content, dict)
    assert result.structured_content["success"] is False, result.structured_content
    return str(result.structured_content["error"])


async def test_open_edit_save_close(workspace: Path) -> None:
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)))) as c:
        opened = await _ok(c, "open_file", {"path": "notes.txt"})
        assert opened["lines"] == 3 and opened["modified"] is False and opened["writable"] is True
        part = await _ok(c, "read_document", {"path": "notes.txt", "start_line": 2, "end_line": 3})
        assert part["content"] == "beta 200\ngamma 3\n"
        replaced = await _ok(
            c, "replace_text", {"path": "notes.txt", "old_text": "a", "new_text": "A", "count": 2}
        )
        assert replaced["replacements"] == 2 and replaced["modified"] is True
        assert (workspace / "notes.txt").read_text() == "alpha 1\nbeta 200\ngamma 3\n"  # not saved yet
        assert "has unsaved changes" in await _refused(c, "close_file", {"path": "notes.txt"})
        saved = await _ok(c, "save_file", {"path": "notes.txt"})
        assert (workspace / "notes.txt").read_text() == "AlphA 1\nbeta 200\ngamma 3\n"
        assert saved["bytes_written"] == len("AlphA 1\nbeta 200\ngamma 3\n")
        await _ok(c, "write_document", {"path": "notes.txt", "content": "fresh\n"})
        await _ok(c, "save_file", {"path": "notes.txt", "save_as": "copy/notes2.txt"})
        assert (workspace / "copy/notes2.txt").read_text() == "fresh\n"
        listed = await _ok(c, "list_open_files", {})
        assert [Path(f["path"]).name for f in listed["files"]] == ["notes2.txt"]
        assert (await _ok(c, "close_file", {"path": "copy/notes2.txt"}))["discarded_changes"] is False
        assert (await _ok(c, "list_open_files", {}))["files"] == []
        assert "is not open; call open_file first" in await _refused(
            c, "read_document", {"path": "notes.txt"}
        )


async def test_new_documents_and_refusals(workspace: Path) -> None:
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)))) as c:
        assert "no such file; pass create=True" in await _refused(c, "open_file", {"path": "new.txt"})
        await _ok(c, "open_file", {"path": "new.txt", "create": True})
        await _ok(c, "write_document", {"path": "new.txt", "content": "one\n"})
        await _ok(c, "save_file", {"path": "new.txt"})
        assert (workspace / "new.txt").read_text() == "one\n"
        assert "does not occur" in await _refused(
            c, "replace_text", {"path": "new.txt", "old_text": "two", "new_text": "2"}
        )
        assert "invalid line range" in await _refused(
            c, "read_document", {"path": "new.txt", "start_line": 0}
        )
        for path in ("../outside/target.txt", "/etc/passwd", ".env"):
            assert (await _refused(c, "open_file", {"path": path})).startswith("Blocked: "), path
        (workspace / "bin.dat").write_bytes(b"\xff\xfe\x00")
        assert "not a UTF-8 text file" in await _refused(c, "open_file", {"path": "bin.dat"})
        linked = await _ok(c, "open_file", {"path": "hard.txt"})  # hard link to a file outside: read-only
        assert linked["writable"] is False
        assert (await _refused(c, "save_file", {"path": "hard.txt"})).startswith("Blocked: ")
        await _ok(c, "open_file", {"path": "notes.txt"})
        assert (await _refused(c, "save_file", {"path": "notes.txt", "save_as": "../escape.txt"})).startswith(
            "Blocked: "
        )


async def test_save_refuses_to_overwrite_a_file_changed_on_disk(workspace: Path) -> None:
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)))) as c:
        await _ok(c, "open_file", {"path": "notes.txt"})
        await _ok(c, "write_document", {"path": "notes.txt", "content": "from the API\n"})
        (workspace / "notes.txt").write_text("saved from the editor window, longer\n")
        assert "changed on disk since it was opened" in await _refused(c, "save_file", {"path": "notes.txt"})
        assert "already open with unsaved changes" in await _refused(c, "open_file", {"path": "notes.txt"})
        await _ok(c, "save_file", {"path": "notes.txt", "overwrite": True})
        assert (workspace / "notes.txt").read_text() == "from the API\n"


async def test_show_in_editor_starts_the_editor_on_the_file(workspace: Path) -> None:
    editor = [sys.executable, "-c", "import sys; open(sys.argv[1] + '.shown', 'w').write('yes')"]
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)), editor)) as c:
        opened = await _ok(c, "open_file", {"path": "notes.txt", "show_in_editor": True})
        assert opened["editor_pid"] > 0
        marker = workspace / "notes.txt.shown"
        deadline = time.monotonic() + 30.0  # the editor is a new Python process: slow when loaded
        while not marker.exists():
            assert time.monotonic() < deadline, "the editor never opened the file"
            await asyncio.sleep(0.05)
        assert marker.read_text() == "yes"
    missing = ["/nonexistent/editor-binary"]
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)), missing)) as c:
        opened = await _ok(c, "open_file", {"path": "notes.txt", "show_in_editor": True})
        assert "could not show the file in the editor" in opened["editor_error"]
    assert (workspace / "notes.txt").read_text().startswith("alpha")


async def test_writing_a_document_not_open_opens_it_and_a_new_one_is_unsaved_until_saved(
    workspace: Path,
) -> None:
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)))) as c:
        started = await _ok(c, "open_file", {"path": "todo.txt", "create": True})
        assert started["modified"] is False and started["saved"] is False  # not on disk yet
        written = await _ok(c, "write_document", {"path": "fresh.txt", "content": "buy milk"})
        assert written["modified"] is True and written["saved"] is False
        assert not (workspace / "fresh.txt").exists()
        await _ok(c, "save_file", {"path": "fresh.txt"})
        listed = {Path(f["path"]).name: f["saved"] for f in (await _ok(c, "list_open_files", {}))["files"]}
        assert listed == {"todo.txt": False, "fresh.txt": True}
        assert (workspace / "fresh.txt").read_text() == "buy milk"
        # An existing file is read in first: the text replaces it only in the document.
        await _ok(c, "write_document", {"path": "notes.txt", "content": "new\n"})
        assert (workspace / "notes.txt").read_text() == "alpha 1\nbeta 200\ngamma 3\n"
        assert (await _refused(c, "write_document", {"path": "/etc/x.txt", "content": "x"})).startswith(
            "Blocked: "
        )


class SwappingGuard(PathGuard):
    """A real guard whose read check passes on the regular file, after which the path is swapped
    for a symlink to ``target``: a command racing the editor between its check and its open, made
    deterministic."""

    def __init__(self, workspace: Path, target: Path) -> None:
        super().__init__(str(workspace))
        self.target = target

    def check_read(self, path: str, cwd: str | None = None, *, confined: bool = False) -> str:
        real = super().check_read(path, cwd, confined=confined)
        os.unlink(real)
        os.symlink(self.target, real)
        return real


def test_a_symlink_swapped_in_after_the_check_is_not_read(workspace: Path, tmp_path: Path) -> None:
    (workspace / "swap.txt").write_text("inside\n")
    guard = SwappingGuard(workspace, tmp_path / "outside" / "target.txt")
    with pytest.raises(PolicyViolation, match="symlink"):
        load_document(guard, "swap.txt", create=False)
    assert (workspace / "swap.txt").is_symlink()  # the swap did happen before the open


async def test_links_to_secret_or_masked_files_are_not_read(workspace: Path) -> None:
    os.symlink("/etc/shadow", workspace / "shadow.txt")
    os.symlink("/proc/self/environ", workspace / "environ.txt")
    os.symlink("/root", workspace / "roothome")
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)))) as c:
        for path in ("shadow.txt", "environ.txt", "roothome/notes.txt"):
            assert (await _refused(c, "open_file", {"path": path})).startswith("Blocked: "), path
            # writing a document not open reads the file in first: refused the same way
            refused = await _refused(c, "write_document", {"path": path, "content": "x"})
            assert refused.startswith("Blocked: "), path
        assert (await _ok(c, "list_open_files", {}))["files"] == []
    assert (workspace / "shadow.txt").is_symlink() and os.readlink(workspace / "shadow.txt") == "/etc/shadow"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user")
async def test_another_users_files_are_read_and_saved_only_as_a_sandboxed_command_may(
    workspace: Path,
) -> None:
    # Starweave runs as root with every capability; the model's commands run without any, so the
    # mode bits of another user's files hold for them, and for the editor too.
    theirs = workspace / "theirs.txt"
    theirs.write_text("their secret\n")
    theirs.chmod(0o600)
    os.chown(theirs, 12345, 12345)
    os.symlink(theirs, workspace / "mine.txt")
    shared = workspace / "shared.txt"
    shared.write_text("read only for us\n")
    shared.chmod(0o644)
    os.chown(shared, 12345, 12345)
    async with Client(create_text_editor_server(ShellConfig(workspace=str(workspace)))) as c:
        for path in ("theirs.txt", "mine.txt"):
            refused = await _refused(c, "open_file", {"path": path})
            assert refused.startswith("Blocked: ") and "permission denied" in refused, path
        opened = await _ok(c, "open_file", {"path": "shared.txt"})
        assert opened["writable"] is False
        read = await _ok(c, "read_document", {"path": "shared.txt"})
        assert read["content"] == "read only for us\n"
        await _ok(c, "write_document", {"path": "shared.txt", "content": "changed\n"})
        assert "Permission denied" in await _refused(c, "save_file", {"path": "shared.txt"})
        # a new file in the workspace (ours) is still saved
        await _ok(c, "write_document", {"path": "ours.txt", "content": "ours\n", "save": True})
    assert shared.read_text() == "read only for us\n"
    assert (workspace / "ours.txt").read_text() == "ours\n"
