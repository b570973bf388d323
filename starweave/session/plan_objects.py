"""A batch plan's object, made available to its run (the reference's ``FromFileSession`` opens it).

For the LinuxAgent the file is copied into the workspace (a different file of that name there is
never overwritten). For the HostAgent the file is opened in its application before the run (a text
file in mousepad on Linux, through the desktop backend's launcher) and, with ``"close": true``, its
window is closed afterwards.
"""

from __future__ import annotations

import filecmp
import shlex
import shutil
import sys
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
    """``source`` copied into ``workspace`` (kept when it is already there, or an equal copy is)."""
    target = workspace / source.name
    if target.exists():
        if target.resolve() == source.resolve() or (target.is_file() and filecmp.cmp(source, target, False)):
            return target
        raise ConfigError(
            f"the plan's object {source.name} differs from the file of that name in the workspace "
            f"{workspace}; not overwritten"
        )
    workspace.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
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
