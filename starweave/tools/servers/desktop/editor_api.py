"""TextEditorExecutor ("Text Editor API MCP Server"): the file API of a Linux text editor (mousepad).

The API side of hybrid GUI–API actions (spec D §18): instead of typing into the editor's window,
the AppAgent opens a document, reads it, edits it (whole text or find/replace) and saves it, on real
files inside the workspace with the same confinement as the FileExecutor (reads inside the
workspace and SHELL.READ_ROOTS, writes inside the workspace only, secrets refused). Like the file
tools, it reads and writes nothing a sandboxed command could not (:mod:`starweave.tools.confine.reach`):
a file is opened only if the sandbox would let the model's own commands read it, never through a
symlink swapped in after the check, and saved with a sandboxed command's privileges. A document can
also be shown in the GUI editor (``show_in_editor``). Saving refuses to overwrite a file that changed
on disk since it was opened (say, saved from the editor's window) unless ``overwrite`` is set.
Every tool returns ``{"success": True, ...}`` or ``{"success": False, "error": ...}``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, EditorError, PolicyViolation
from starweave.tools.confine.paths import PathGuard, open_for_write
from starweave.tools.confine.reach import open_for_model, sandbox_privileges
from starweave.tools.servers.files import make_guard

EDITOR_SERVER_NAME = "Text Editor API MCP Server"
DEFAULT_EDITOR_COMMAND = ("mousepad",)
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
PathArg = Annotated[
    str, Field(description="The document's path; relative paths are relative to the workspace.")
]


@dataclass
class Document:
    """One open document: its text, the text last loaded or saved, and the file's stamp then."""

    path: str
    text: str
    saved_text: str
    stamp: tuple[int, int] | None  # (mtime_ns, size) of the file on disk, None when it did not exist
    writable: bool

    @property
    def modified(self) -> bool:
        """True when the text differs from the file as last loaded or saved."""
        return self.text != self.saved_text

    @property
    def saved(self) -> bool:
        """True when the file on disk holds the text (a new document is not saved until save_file)."""
        return self.stamp is not None and not self.modified

    def info(self) -> dict[str, Any]:
        """``{path, lines, characters, modified, saved, writable}``."""
        return {
            "path": self.path,
            "lines": len(self.text.splitlines()),
            "characters": len(self.text),
            "modified": self.modified,
            "saved": self.saved,
            "writable": self.writable,
        }


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def _writable(guard: PathGuard, path: str) -> bool:
    """Whether saving to ``path`` would be allowed: by the policy, and by the file's permissions
    for a sandboxed command (another user's file in the workspace is not)."""
    try:
        guard.check_write(path)
        with sandbox_privileges():
            # effective_ids: judged with this thread's lowered capabilities, as the save will be.
            return not os.path.lexists(path) or os.access(path, os.W_OK, effective_ids=True)
    except PolicyViolation:
        return False


def load_document(guard: PathGuard, path: str, create: bool) -> Document:
    """Read ``path`` (confined like the FileExecutor) into a new document.

    Only a regular file a sandboxed command could read is read, and only the one that was checked
    (PolicyViolation otherwise); a missing file starts an empty document with ``create``."""
    try:
        real, fd = open_for_model(guard, path, confined=True)
    except FileNotFoundError:
        if not create:
            raise EditorError(f"{path}: no such file; pass create=True to start a new document") from None
        return Document(guard.check_write(path), "", "", None, writable=True)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_DOCUMENT_BYTES + 1)
        # The stamp of the file read, not of whatever the path names by now.
        st = os.fstat(fh.fileno())
    if len(data) > MAX_DOCUMENT_BYTES:
        raise EditorError(f"{path}: larger than {MAX_DOCUMENT_BYTES} bytes; use the shell tools for it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditorError(f"{path}: not a UTF-8 text file") from None
    return Document(real, text, text, (st.st_mtime_ns, st.st_size), writable=_writable(guard, real))


def save_document(guard: PathGuard, doc: Document, target: str | None, overwrite: bool) -> dict[str, Any]:
    """Write ``doc`` to its file (or to ``target``, which it then becomes)."""
    real = guard.check_write(target or doc.path)
    if real == doc.path and not overwrite and _stamp(real) != doc.stamp:
        raise EditorError(
            f"{doc.path} changed on disk since it was opened (saved from another program or the "
            "editor window?); open_file it again to see the change, or save with overwrite=True"
        )
    data = doc.text.encode("utf-8")
    # With a sandboxed command's privileges: a file or folder the model's commands may not write
    # (another user's, read-only) is not written for them either.
    with sandbox_privileges():
        fd = open_for_write(real, append=False, workspace=guard.workspace)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        st = os.fstat(fh.fileno())
    doc.path, doc.saved_text, doc.stamp, doc.writable = real, doc.text, (st.st_mtime_ns, st.st_size), True
    return {"success": True, "path": real, "bytes_written": len(data)}


class TextEditorSession:
    """The open documents of one server instance, keyed by resolved path."""

    def __init__(self, shell: ShellConfig, editor_command: Sequence[str]) -> None:
        self.shell = shell
        self.editor_command = list(editor_command)
        self.documents: dict[str, Document] = {}
        self._children: set[asyncio.Task[int]] = set()

    def guard(self) -> PathGuard:
        """The path guard of the workspace (ConfigError when SHELL.WORKSPACE is unusable)."""
        return make_guard(self.shell)

    def document(self, path: str) -> Document:
        """The open document at ``path``; EditorError naming the open ones if it is not open."""
        real = self.guard().resolve(path)
        doc = self.documents.get(real)
        if doc is None:
            raise EditorError(f"{path} is not open; call open_file first (open: {sorted(self.documents)})")
        return doc

    async def show(self, path: str) -> int:
        """Open ``path`` in the GUI editor; returns the editor's pid (reaped in the background)."""
        if not self.editor_command:
            raise EditorError("no GUI editor is configured for this server")
        proc = await asyncio.create_subprocess_exec(
            *self.editor_command,
            path,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        task = asyncio.create_task(proc.wait())
        self._children.add(task)
        task.add_done_callback(self._children.discard)
        return proc.pid


async def _guarded(fn: Any, *args: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = await asyncio.to_thread(fn, *args)
        return result
    except PolicyViolation as exc:
        return {"success": False, "error": f"Blocked: {exc}"}
    except (EditorError, OSError, ConfigError) as exc:
        return {"success": False, "error": str(exc)}


def create_text_editor_server(
    shell: ShellConfig, editor_command: Sequence[str] = DEFAULT_EDITOR_COMMAND
) -> MCPServer:
    """Build TextEditorExecutor for the workspace of ``shell``; ``editor_command`` shows files in the GUI."""
    srv = MCPServer(EDITOR_SERVER_NAME, log_level="WARNING")
    session = TextEditorSession(shell, editor_command)

    def _open(path: str, create: bool) -> dict[str, Any]:
        doc = load_document(session.guard(), path, create)
        previous = session.documents.get(doc.path)
        if previous is not None and previous.modified:
            raise EditorError(
                f"{path} is already open with unsaved changes; save_file or close_file it first"
            )
        session.documents[doc.path] = doc
        return {"success": True, **doc.info()}

    @srv.tool()
    async def open_file(
        path: PathArg,
        create: Annotated[
            bool, Field(description="Start an empty document if the file does not exist.")
        ] = False,
        show_in_editor: Annotated[
            bool, Field(description="Also open the file in the text editor's window.")
        ] = False,
    ) -> dict[str, Any]:
        """Open a text file as a document (re-opening reloads it from disk).

        Returns {"success", "path", "lines", "characters", "modified", "saved", "writable"} (+ "editor_pid").
        """
        result = await _guarded(_open, path, create)
        if result["success"] and show_in_editor:
            try:
                result["editor_pid"] = await session.show(result["path"])
            except (EditorError, OSError) as exc:
                result["editor_error"] = f"could not show the file in the editor: {exc}"
        return result

    def _read(path: str, start_line: int, end_line: int) -> dict[str, Any]:
        doc = session.document(path)
        lines = doc.text.splitlines(keepends=True)
        last = len(lines) if end_line == -1 else min(end_line, len(lines))
        if start_line < 1 or (end_line != -1 and end_line < start_line):
            raise EditorError(f"invalid line range {start_line}..{end_line}; lines are 1-based, -1 = the end")
        content = "".join(lines[start_line - 1 : last])
        return {"success": True, "content": content, "start_line": start_line, "end_line": last, **doc.info()}

    @srv.tool()
    async def read_document(
        path: PathArg,
        start_line: Annotated[int, Field(description="First line to return (1-based).")] = 1,
        end_line: Annotated[int, Field(description="Last line to return; -1 = to the end.")] = -1,
    ) -> dict[str, Any]:
        """Read an open document's current text (unsaved edits included), optionally a line range."""
        return await _guarded(_read, path, start_line, end_line)

    def _write(path: str, content: str, save: bool) -> dict[str, Any]:
        # Writing a document that is not open opens it (a new one when the file does not exist):
        # what else could the caller mean, and a small model does not always open first.
        real = session.guard().resolve(path)
        doc = session.documents.get(real) or session.documents.setdefault(
            real, load_document(session.guard(), path, create=True)
        )
        doc.text = content
        if save:
            return {**_save(path, None, False), **doc.info()}
        return {"success": True, **doc.info()}

    @srv.tool()
    async def write_document(
        path: PathArg,
        content: Annotated[str, Field(description="The document's complete new text.")],
        save: Annotated[bool, Field(description="Also save it to its file, as save_file does.")] = False,
    ) -> dict[str, Any]:
        """Replace a document's whole text (not saved until save_file, or save=true); opens it first
        if needed."""
        return await _guarded(_write, path, content, save)

    def _replace(path: str, old: str, new: str, count: int) -> dict[str, Any]:
        doc = session.document(path)
        if not old:
            raise EditorError("old_text must not be empty")
        found = doc.text.count(old)
        if found == 0:
            raise EditorError(f"{old!r} does not occur in {doc.path}")
        doc.text = doc.text.replace(old, new, count if count > 0 else -1)
        replaced = found if count <= 0 else min(count, found)
        return {"success": True, "replacements": replaced, **doc.info()}

    @srv.tool()
    async def replace_text(
        path: PathArg,
        old_text: Annotated[str, Field(description="The exact text to find.")],
        new_text: Annotated[str, Field(description="The text to put in its place.")],
        count: Annotated[int, Field(description="Replace at most this many occurrences; 0 = all.")] = 0,
    ) -> dict[str, Any]:
        """Find and replace text in an open document (not saved until save_file)."""
        return await _guarded(_replace, path, old_text, new_text, count)

    def _save(path: str, save_as: str | None, overwrite: bool) -> dict[str, Any]:
        doc = session.document(path)
        old_key = doc.path
        result = save_document(session.guard(), doc, save_as, overwrite)
        session.documents.pop(old_key, None)
        session.documents[doc.path] = doc
        return result

    @srv.tool()
    async def save_file(
        path: PathArg,
        save_as: Annotated[
            str | None, Field(description="Save under this path (inside the workspace) instead.")
        ] = None,
        overwrite: Annotated[
            bool, Field(description="Save even if the file changed on disk since it was opened.")
        ] = False,
    ) -> dict[str, Any]:
        """Save an open document to its file (or to save_as). Returns {"success", "path", "bytes_written"}."""
        return await _guarded(_save, path, save_as, overwrite)

    def _close(path: str, discard_changes: bool) -> dict[str, Any]:
        doc = session.document(path)
        if doc.modified and not discard_changes:
            raise EditorError(f"{doc.path} has unsaved changes; save_file it or pass discard_changes=True")
        del session.documents[doc.path]
        return {"success": True, "path": doc.path, "discarded_changes": doc.modified}

    @srv.tool()
    async def close_file(
        path: PathArg,
        discard_changes: Annotated[bool, Field(description="Close even with unsaved changes.")] = False,
    ) -> dict[str, Any]:
        """Close an open document."""
        return await _guarded(_close, path, discard_changes)

    @srv.tool()
    async def list_open_files() -> dict[str, Any]:
        """The open documents.

        Returns {"success", "files": [{"path", "lines", "characters", "modified", "saved", "writable"}]}.
        """
        return {"success": True, "files": [d.info() for d in session.documents.values()]}

    return srv
