"""The "File MCP Server": read, write and list files with the shell policy's path rules.

Reads are confined to the workspace and SHELL.READ_ROOTS and never reach sensitive files; writes
go to the workspace only and never in readonly mode. Nothing is read, listed or written that a
command in the sandbox could not read or write (:mod:`starweave.tools.confine.reach`): every call
runs with a sandboxed command's privileges, so Starweave run as root gets no further than the
model's own commands. Only regular files are read or written: FIFOs, devices and sockets are
refused before they are opened. Relative paths are relative to the workspace.
Every tool returns ``{"success": True, ...}`` or ``{"success": False, "error": ...}``; nothing
raises to the model.
"""

from __future__ import annotations

import asyncio
import heapq
import os
import stat
import time
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, PolicyViolation
from starweave.text import unencodable_problem
from starweave.tools.confine.paths import PathGuard, open_for_write
from starweave.tools.confine.reach import check_model_read, open_for_model, sandbox_privileges
from starweave.tools.confine.safeopen import fd_path
from starweave.tools.confine.workers import FILE_CALLS

MAX_ENTRIES = 1000  # entries list_directory returns
MAX_SCAN = 1_000_000  # entries it reads (and counts) at most
LIST_SECONDS = 5.0  # and the time it spends reading them
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
    limit = min(max_bytes, cap)
    # Only the regular file that was checked, opened as a sandboxed command would open it: a FIFO,
    # device or socket is refused before it is opened for real, a symlink swapped in after the check
    # is noticed, and a file its permissions keep from the model's commands stays closed.
    try:
        real, fd = open_for_model(guard, path, confined=True)
    except FileNotFoundError:
        return {"success": False, "error": f"{path}: not a regular file (or it does not exist)"}
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
    # With a sandboxed command's privileges: a file or folder the model's commands may not write
    # (another user's, read-only) is not written for them either.
    with sandbox_privileges():
        fd = open_for_write(real, append=append, workspace=guard.workspace)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return {"success": True, "path": real, "bytes_written": len(data), "appended": append}


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _names(fd: int, deadline: float, seen: list[int]) -> Iterator[str]:
    """The names in the folder open as ``fd``, counted in ``seen[0]``, until the deadline or
    MAX_SCAN (then ``seen[1]`` is set)."""
    with os.scandir(fd) as it:
        for entry in it:
            seen[0] += 1
            yield entry.name
            if seen[0] % 1024 == 0 and (seen[0] >= MAX_SCAN or time.monotonic() > deadline):
                seen[1] = 1
                return


def _list(guard: PathGuard, path: str, seconds: float = LIST_SECONDS) -> dict[str, Any]:
    real = check_model_read(guard, path, confined=True)
    # Listed as a sandboxed command lists it: a folder it may not read, or whose entries it may not
    # look up, is refused or shown the same way.
    with sandbox_privileges():
        return _listing(real, path, seconds)


def _open_dir(real: str, path: str) -> int:
    """The checked folder ``real``, opened without following a symlink swapped in since the check."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except PermissionError:
        raise PolicyViolation(
            f"listing {path!r} is refused: a sandboxed command may not read {real} (permission denied)"
        ) from None
    if fd_path(fd) != real:
        os.close(fd)
        raise PolicyViolation(f"listing {path!r} refused: the path changed after the check")
    return fd


def _listing(real: str, path: str, seconds: float) -> dict[str, Any]:
    if not os.path.isdir(real):
        return {"success": False, "error": f"{path}: not a directory (or it does not exist)"}
    deadline = time.monotonic() + seconds
    fd = _open_dir(real, path)
    try:
        # One pass, never holding more than MAX_ENTRIES names: the first ones in order, the rest counted.
        seen = [0, 0]
        first = heapq.nsmallest(MAX_ENTRIES, _names(fd, deadline, seen))
        entries: list[dict[str, Any]] = []
        for name in first:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed meanwhile
            except PermissionError:
                # A folder readable but not searchable: a sandboxed ls shows the name and "?" too.
                entries.append({"name": name, "type": "unknown", "size": 0})
                continue
            entries.append({"name": name, "type": _kind(st.st_mode), "size": st.st_size})
    finally:
        os.close(fd)
    total, cut = seen[0], bool(seen[1])
    result: dict[str, Any] = {
        "success": True,
        "path": real,
        "entries": entries,
        "truncated": cut or total > len(entries),
        "total": total,
    }
    if cut:
        result["note"] = (
            f"the folder holds at least {total} entries, too many to read in time: the entries are the "
            f"first by name among the {total} read, not of the whole folder (use ls with a pattern)"
        )
    return result


def _argument_problem(path: str, content: str = "") -> str | None:
    """Why the tool's arguments cannot reach the file system (a NUL, a lone surrogate), or None."""
    return unencodable_problem(path, "the path", nul=True) or unencodable_problem(content, "the content")


async def _guarded(
    fn: Callable[[], dict[str, Any]], owner: object, seconds: float, problem: str | None = None
) -> dict[str, Any]:
    if problem:  # checked here, before a thread or the OS sees it (it raised ValueError there)
        return {"success": False, "error": problem}
    try:
        # Its own pool with a deadline: a call stuck in the file system (or many of them) never holds
        # up the shell's checks, another device or the event loop.
        result: dict[str, Any] = await asyncio.wait_for(FILE_CALLS.run(fn, owner=owner), seconds)
        return result
    except PolicyViolation as exc:
        return {"success": False, "error": f"Blocked: {exc}"}
    except TimeoutError:  # before OSError: TimeoutError is an OSError
        return {"success": False, "error": f"Timeout after {seconds:g}s. (the file system did not answer)"}
    except (OSError, ConfigError) as exc:
        return {"success": False, "error": str(exc)}


def create_file_server(shell: ShellConfig) -> MCPServer:
    """Build the "File MCP Server" with ``read_file``, ``write_file`` and ``list_directory``."""
    srv = MCPServer("File MCP Server", instructions=FILE_INSTRUCTIONS, log_level="WARNING")
    default_max = shell.max_output_bytes
    seconds = float(shell.timeout)  # a file-tool call ends within SHELL.TIMEOUT
    owner = object()  # this server's share of the file-tool threads

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
        return await _guarded(
            lambda: _read(guard(), path, max_bytes, default_max), owner, seconds, _argument_problem(path)
        )

    @srv.tool()
    async def write_file(
        path: Annotated[
            str, Field(description="File to write inside the workspace; missing folders are created.")
        ],
        content: Annotated[str, Field(description="The text to write (UTF-8).")],
        append: Annotated[bool, Field(description="Append to the file instead of replacing it.")] = False,
    ) -> dict[str, Any]:
        """Write (or append) text to a file in the workspace. Returns {"success", "path", "bytes_written"}."""
        return await _guarded(
            lambda: _write(guard(), path, content, append),
            owner,
            seconds,
            _argument_problem(path, content),
        )

    @srv.tool()
    async def list_directory(
        path: Annotated[str, Field(description="Directory to list; default: the workspace.")] = ".",
    ) -> dict[str, Any]:
        """List a directory.

        Returns {"success", "path", "entries": [{"name", "type", "size"}], "truncated", "total"}: the
        first 1000 entries by name and how many there are (plus "note" when the folder is too big
        to read whole; "total" is then a lower bound).
        """
        return await _guarded(
            lambda: _list(guard(), path, min(LIST_SECONDS, seconds / 2)),
            owner,
            seconds,
            _argument_problem(path),
        )

    return srv
