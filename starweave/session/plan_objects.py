"""A batch plan's object, made available to its run (the reference's ``FromFileSession`` opens it).

For the LinuxAgent the file is copied into the workspace (a different file of that name there is
never overwritten, and a symlink there is refused, never written through). For the HostAgent the
file is opened in its application before the run (a text file in mousepad on Linux, through the
desktop backend's launcher) and, with ``"close": true``, its window is closed afterwards.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starweave.errors import ConfigError
from starweave.tools.desktop import get_backend
from starweave.tools.desktop.model import WindowInfo
from starweave.tools.desktop.settle import apoll_until

#: How long an opened object's window may take to appear.
OPEN_SECONDS = 20.0
TEXT_SUFFIXES = {".txt", ".md", ".csv", ".json", ".log", ".py", ".yaml", ".yml", ".ini", ".cfg", ".xml"}


def place_in_workspace(source: Path, workspace: Path) -> Path:
    """``source`` copied into ``workspace`` (kept when an equal regular file is there already).

    An earlier plan's model may have planted a symlink under the object's name: it is refused, never
    written through or handed over; the copy goes to a fresh temporary file renamed into place."""
    target = workspace / source.name
    if target.is_symlink():
        raise ConfigError(
            f"the workspace's {target} is a symlink, not the plan's object {source.name}; "
            "not copied through it (remove it to run this plan)"
        )
    if target.exists():
        if target.is_file() and filecmp.cmp(source, target, False):
            return target
        raise ConfigError(
            f"the plan's object {source.name} differs from the file of that name in the workspace "
            f"{workspace}; not overwritten"
        )
    workspace.mkdir(parents=True, exist_ok=True)
    # mkstemp creates the file with O_EXCL: nothing planted under the temporary name is followed.
    fd, tmp = tempfile.mkstemp(prefix=f".{source.name}.", suffix=".tmp", dir=workspace)
    try:
        with os.fdopen(fd, "wb") as out, source.open("rb") as data:
            shutil.copyfileobj(data, out)
        shutil.copystat(source, tmp)
        # A symlink planted since the check is replaced, not followed.
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
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
