"""Top-level windows and the processes behind them: an application's own dialog windows, one walk over
a window and its dialogs, starting an application, and waiting for a window to come or go."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.model import ControlInfo, WalkLimits
from starweave.tools.desktop.walk import NodeAdapter, WalkResult, walk_controls
from starweave.tools.desktop.windows.elements import control_type, is_dialog


def dialogs_of(
    auto: Any, window_id: str, element: Any, errors: tuple[type[BaseException], ...]
) -> list[tuple[str, Any]]:
    """(id, element) of the visible dialog windows of the window's own process that are top-level
    windows of their own (a dialog shown as a child of the window is in its walk anyway), read fresh:
    they may have opened since the windows were listed. None when the window is a dialog itself."""
    try:
        if is_dialog(element, errors):
            return []
        pid = int(element.ProcessId)
        tops = list(auto.GetRootControl().GetChildren())
    except (*errors, AttributeError):  # type: ignore[misc]
        return []  # the dialogs are a bonus: never lose the main window's walk over them
    found = []
    for top in tops:
        try:
            top_id = str(top.NativeWindowHandle)
            if (
                top_id == window_id
                or int(top.ProcessId) != pid
                or top.IsOffscreen
                or control_type(top) != "Window"
                or not is_dialog(top, errors)
            ):
                continue
        except (*errors, AttributeError):  # type: ignore[misc]
            continue  # a window that closed while we looked
        found.append((top_id, top))
    return found


@dataclass
class PartsWalk:
    """One walk over a window and its dialogs: ids "1", "2", ... across all of them."""

    controls: list[ControlInfo] = field(default_factory=list)
    elements: dict[str, Any] = field(default_factory=dict)
    # Control id -> the dialog holding it (controls of the window itself are not listed).
    owners: dict[str, str] = field(default_factory=dict)
    # The windows actually walked, the main window first.
    walked: list[str] = field(default_factory=list)


def walk_parts(
    parts: Sequence[tuple[str, Any]],
    reader: NodeAdapter[Any],
    limits: WalkLimits,
    cancelled: Callable[[], bool],
) -> PartsWalk:
    """Walk ``parts`` (the main window first, then its dialogs) under one shared budget of ``limits``."""
    started = time.monotonic()
    nodes_left = limits.max_nodes
    results: dict[str, WalkResult[Any]] = {}
    # Dialogs first, so a huge main window cannot starve the modal dialog that actually takes the
    # input; the main window's controls are still listed first.
    for part_id, part in reversed(parts):
        seconds_left = limits.max_seconds - (time.monotonic() - started)
        if nodes_left <= 0 or seconds_left <= 0 or cancelled():
            break
        sub = limits.model_copy(update={"max_nodes": nodes_left, "max_seconds": seconds_left})
        results[part_id] = walk_controls(part, reader, sub, cancelled=cancelled)
        nodes_left -= results[part_id].visited
    merged = PartsWalk(walked=[part_id for part_id, _ in parts if part_id in results])
    for index, part_id in enumerate(merged.walked):
        result = results[part_id]
        for info in result.controls:
            control_id = str(len(merged.controls) + 1)
            merged.controls.append(info.model_copy(update={"id": control_id}))
            merged.elements[control_id] = result.elements[info.id]
            if index > 0:
                merged.owners[control_id] = part_id
    return merged


def poll_cancellable(
    probe: Callable[[], bool], timeout: float, interval: float, cancelled: Callable[[], bool]
) -> bool:
    """Call ``probe`` until it is true, ``timeout`` passes or ``cancelled()`` (the caller gave up)."""
    deadline = time.monotonic() + timeout
    while not cancelled():
        if probe():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return False


def split_command(command: str) -> list[str]:
    """Windows command-line words: backslashes are path separators, not escapes, and the quotes
    around a word (``"C:\\Program Files\\app.exe"``) are dropped."""
    words = shlex.split(command, posix=False)
    return [w[1:-1] if len(w) >= 2 and w[0] == w[-1] and w[0] in "\"'" else w for w in words]


def spawn(command: str) -> subprocess.Popen[bytes]:
    """Start ``command`` detached from our stdio (an MCP server's stdio must stay its own)."""
    argv = split_command(command)
    if not argv:
        raise DesktopError("The command to launch is empty.")
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # POSIX only; Windows ignores it
            creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
        )
    except OSError as exc:
        raise DesktopError(f"Failed to launch application {command!r}: {exc}") from exc
