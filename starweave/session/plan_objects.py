"""A batch plan's object, made available to its run (the reference's ``FromFileSession`` opens it).

A plan may come from anyone, so its object is used only when a command in the sandbox could read it
(:mod:`starweave.tools.confine.reach`): ``/etc/shadow``, a masked ``~/.aws/credentials``, a file
its permissions keep from a sandboxed command are refused with one line naming the object and why,
and nothing is copied or opened. Besides what the sandbox shows everywhere, the workspace, the read
roots and the folder the plan looks its objects up in (the user handed it over with ``--plan``) are
readable, as long as that folder holds no secret location (a home, ``/etc``, ``/``, ``/tmp`` ...).

For the LinuxAgent the file is copied into the workspace (a different file of that name there is
never overwritten, and a symlink there is refused, never written through). For the HostAgent the
file is opened in its application before the run (a text file in mousepad on Linux, through the
desktop backend's launcher) and, with ``"close": true``, its window is closed afterwards.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import stat
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import BinaryIO

from starweave.errors import ConfigError, PolicyViolation
from starweave.tools.confine.paths import PathGuard, is_within
from starweave.tools.confine.reach import PRIVATE_TREES, open_for_model
from starweave.tools.desktop import get_backend
from starweave.tools.desktop.model import WindowInfo
from starweave.tools.desktop.settle import apoll_until

#: How long an opened object's window may take to appear.
OPEN_SECONDS = 20.0
TEXT_SUFFIXES = {".txt", ".md", ".csv", ".json", ".log", ".py", ".yaml", ".yml", ".ini", ".cfg", ".xml"}
CHUNK = 1 << 20


def object_guard(workspace: Path, read_roots: Sequence[str] = (), folder: Path | None = None) -> PathGuard:
    """The path rules a plan's object is read with: the workspace and SHELL.READ_ROOTS in force,
    plus ``folder`` (where the plan looks its objects up) unless reading all of it would include a
    secret location or a tree the sandbox keeps private."""
    roots = list(read_roots)
    guard = PathGuard(str(workspace), "workspace", roots)
    if folder is not None:
        real = os.path.realpath(folder)
        # A plan folder in /tmp is common and fine; /tmp itself, /proc or /dev are no plan folder.
        private = any(is_within(tree, real) for tree in PRIVATE_TREES) or any(
            is_within(real, tree) for tree in ("/proc", "/dev")
        )
        if not private and guard.recursive_reason(real) is None:
            roots.append(real)
    return PathGuard(str(workspace), "workspace", roots)


def open_object(source: Path, guard: PathGuard) -> tuple[Path, int]:
    """Open the plan's object ``source`` as a sandboxed command would; returns its resolved path
    and a descriptor (the caller closes it). Refused or missing: a one-line ConfigError, and
    nothing has been read."""
    try:
        real, fd = open_for_model(guard, str(source), confined=False)
    except PolicyViolation as exc:
        raise ConfigError(
            f"the plan's object {source} is not used (nothing copied or opened): {exc}"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise ConfigError(f"the plan's object {source}: no such file") from None
    return Path(real), fd


def check_object(source: Path, guard: PathGuard) -> Path:
    """The resolved path of the plan's object ``source`` when a sandboxed command could read it
    (:func:`open_object`), for an application that opens it itself."""
    real, fd = open_object(source, guard)
    os.close(fd)
    return real


def _same_content(data: BinaryIO, target: Path) -> bool:
    """Whether the regular file ``target`` (never followed if it is a link, never a FIFO) holds
    exactly what ``data`` holds; ``data`` is rewound."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            return False
        raise
    with os.fdopen(fd, "rb") as other:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        data.seek(0)
        try:
            while True:
                mine, theirs = data.read(CHUNK), other.read(CHUNK)
                if mine != theirs:
                    return False
                if not mine:
                    return True
        finally:
            data.seek(0)


def _copy_into(data: BinaryIO, target: Path) -> None:
    """Copy ``data`` (a regular file) to ``target`` through a fresh temporary file renamed into place."""
    st = os.fstat(data.fileno())
    # mkstemp creates the file with O_EXCL: nothing planted under the temporary name is followed.
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := data.read(CHUNK):
                out.write(chunk)
            out.flush()  # before the times: a later write would change them
            # The permission bits and times, never a set-id bit of the original.
            os.fchmod(out.fileno(), stat.S_IMODE(st.st_mode) & 0o777)
            os.utime(out.fileno(), ns=(st.st_atime_ns, st.st_mtime_ns))
        # A symlink planted since the check is replaced, not followed.
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def place_in_workspace(source: Path, workspace: Path, guard: PathGuard) -> Path:
    """``source`` copied into ``workspace`` (kept when an equal regular file is there already).

    The object is read only if a sandboxed command could read it, under ``guard``'s roots (see
    :func:`object_guard`). An earlier plan's model may have planted a symlink under the object's
    name: it is refused, never written through or handed over; the copy goes to a fresh temporary
    file renamed into place."""
    _real, fd = open_object(source, guard)
    with os.fdopen(fd, "rb") as data:
        target = workspace / source.name
        if target.is_symlink():
            raise ConfigError(
                f"the workspace's {target} is a symlink, not the plan's object {source.name}; "
                "not copied through it (remove it to run this plan)"
            )
        if target.exists():
            if _same_content(data, target):
                return target
            raise ConfigError(
                f"the plan's object {source.name} differs from the file of that name in the workspace "
                f"{workspace}; not overwritten"
            )
        workspace.mkdir(parents=True, exist_ok=True)
        _copy_into(data, target)
    return target


def opener(path: Path) -> str:
    """The command that opens ``path`` in its application on this platform."""
    if sys.platform == "win32":
        return "notepad.exe" if path.suffix.lower() in TEXT_SUFFIXES else "explorer.exe"
    return "mousepad" if path.suffix.lower() in TEXT_SUFFIXES else "xdg-open"


def _window_of(windows: list[WindowInfo], name: str) -> WindowInfo | None:
    needle = name.casefold()
    return next((w for w in windows if needle in (w.title or w.name).casefold()), None)


@asynccontextmanager
async def opened_object(path: Path, close: bool) -> AsyncIterator[str]:
    """Open ``path`` in its application for the run; yields the window's title. With ``close``
    the window is closed afterwards (a window that stays open, e.g. asking to save, is left)."""
    backend = get_backend()
    try:
        await backend.launch(f"{opener(path)} {shlex.quote(str(path))}", wait=OPEN_SECONDS)

        async def shown() -> WindowInfo | None:
            return _window_of(await backend.list_windows(), path.name)

        window = await apoll_until(shown, timeout=OPEN_SECONDS, interval=0.2)
        if window is None:
            raise ConfigError(f"opened {path} with {opener(path)}, but no window titled {path.name} appeared")
        yield window.title or window.name
        if close:
            # Listed again: the run may have renamed the window (a saved file, a dialog).
            current = _window_of(await backend.list_windows(), path.name)
            if current is not None:
                await backend.close_window(current.id)
    finally:
        await backend.aclose()
