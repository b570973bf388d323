"""The "File MCP Server": read, write and list files with the shell policy's path rules.

Reads are confined to the workspace and SHELL.READ_ROOTS and never reach sensitive files; writes
go to the workspace only and never in readonly mode. Only regular files are read or written: FIFOs,
devices and sockets are refused before they are opened. Relative paths are relative to the workspace.
Every tool returns ``{"success": True, ...}`` or ``{"success": False, "error": ...}``; nothing
raises to the model.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, PolicyViolation
from starweave.tools.servers.shell.paths import PathGuard, open_for_write
from starweave.tools.servers.shell.safeopen import open_checked_read

MAX_ENTRIES = 1000
FILE_INSTRUCTIONS = (
    "Reads, writes and lists files. Relative paths are relative to the workspace; writes must stay "
    "inside the workspace, reads inside the workspace or the configured read roots; secrets (keys, "
    ".env files, /etc/shadow ...) are refused."
)


def make_guard(shell: ShellConfig) -> PathGuard:
    """The path guard of the file server for ``shell`` (the workspace is created if missing)."""
    if not shell.workspace or not os.path.isabs(shell.workspace):
        raise ConfigError(f"SHELL.WORKSPACE must be an absolute directory (got {shell.workspace!r})")
    os.makedirs(shell.workspace, exist_ok=True)
    return PathGuard(
        shell.workspace, "readonly" if shell.mode == "readonly" else "workspace", shell.read_roots
    )


def _read(guard: PathGuard, path: str, max_bytes: int, cap: int) -> dict[str, Any]:
    real = guard.check_read(path, confined=True)
    limit = min(max_bytes, cap)
    if not os.path.lexists(real):
        return {"success": False, "error": f"{path}: not a regular file (or it does not exist)"}
    # Only the regular file that was checked: a FIFO, device or socket is refused before it is opened
    # for real, and a symlink swapped in after the check is noticed.
    fd = open_checked_read(real, allow_devnull=False)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(limit)
    result: dict[str, Any] = {
        "success": True,
        "path": real,
        "size": size,
        "content": data.decode("utf-8", errors="replace"),
        "truncated": size > len(data),
    }
    if limit < max_bytes and result["truncated"]:
        result["note"] = f"max_bytes is capped at SHELL.MAX_OUTPUT_BYTES ({cap} bytes)"
    return result


def _write(guard: PathGuard, path: str, content: str, append: bool) -> dict[str, Any]:
    real = guard.check_write(path)
    if real in ("/dev/null", "/dev/stdout", "/dev/stderr"):
        return {"success": False, "error": f"{path}: not a file in the workspace"}
    data = content.encode("utf-8")
    # open_for_write creates a regular file or reopens one; FIFOs, devices and sockets are refused.
    fd = open_for_write(real, append=append, workspace=guard.workspace)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return {"success": True, "path": real, "bytes_written": len(data), "appended": append}


def _list(guard: PathGuard, path: str) -> dict[str, Any]:
    real = guard.check_read(path, confined=True)
    if not os.path.isdir(real):
        return {"success": False, "error": f"{path}: not a directory (or it does not exist)"}
    entries: list[dict[str, Any]] = []
    with os.scandir(real) as it:
        for entry in sorted(it, key=lambda e: e.name):
            if len(entries) >= MAX_ENTRIES:
                break
            st = entry.stat(follow_symlinks=False)
            kind = (
                "symlink"
                if stat.S_ISLNK(st.st_mode)
                else "dir"
                if stat.S_ISDIR(st.st_mode)
                else ("file" if stat.S_ISREG(st.st_mode) else "other")
            )
            entries.append({"name": entry.name, "type": kind, "size": st.st_size})
    total = len(os.listdir(real))
    return {"success": True, "path": real, "entries": entries, "truncated": total > len(entries)}


async def _guarded(fn: Any, *args: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = await asyncio.to_thread(fn, *args)
        return result
    except PolicyViolation as exc:
        return {"success": False, "error": f"Blocked: {exc}"}
    except (OSError, ConfigError) as exc:
        return {"success": False, "error": str(exc)}


def create_file_server(shell: ShellConfig) -> MCPServer:
    """Build the "File MCP Server" with ``read_file``, ``write_file`` and ``list_directory``."""
    srv = MCPServer("File MCP Server", instructions=FILE_INSTRUCTIONS, log_level="WARNING")
    default_max = shell.max_output_bytes

    def guard() -> PathGuard:
        return make_guard(shell)

    @srv.tool()
    async def read_file(
        path: Annotated[
            str, Field(description="File to read; relative paths are relative to the workspace.")
        ],
        max_bytes: Annotated[
            int,
            Field(
                description="Read at most this many bytes (the server caps it at its output limit); "
                "larger files come back truncated.",
                gt=0,
            ),
        ] = default_max,
    ) -> dict[str, Any]:
        """Read a text file. Returns {"success", "path", "size", "content", "truncated"} (plus "note"
        when max_bytes was lowered to the server's cap)."""
        return await _guarded(lambda: _read(guard(), path, max_bytes, default_max))

    @srv.tool()
    async def write_file(
        path: Annotated[
            str, Field(description="File to write inside the workspace; missing folders are created.")
        ],
        content: Annotated[str, Field(description="The text to write (UTF-8).")],
        append: Annotated[bool, Field(description="Append to the file instead of replacing it.")] = False,
    ) -> dict[str, Any]:
        """Write (or append) text to a file in the workspace. Returns {"success", "path", "bytes_written"}."""
        return await _guarded(lambda: _write(guard(), path, content, append))

    @srv.tool()
    async def list_directory(
        path: Annotated[str, Field(description="Directory to list; default: the workspace.")] = ".",
    ) -> dict[str, Any]:
        """List a directory.

        Returns {"success", "path", "entries": [{"name", "type", "size"}], "truncated"}.
        """
        return await _guarded(lambda: _list(guard(), path))

    return srv
