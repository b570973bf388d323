"""X11 side of the Linux backend: xdotool for windows and input, mss for screenshots, python-xlib to
close windows politely. Every function blocks; the backend calls them on its worker thread.

There may be no window manager (Xvfb): windows map at (0, 0) and overlap, so a window is raised
before it gets input, and ``xdotool search`` always uses ``--onlyvisible`` (GTK's hidden 1x1 leader
windows would match too otherwise).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from starweave.errors import DesktopError
from starweave.tools.desktop.model import Drag, Rect
from starweave.tools.desktop.screen import grab_raw as grab_raw
from starweave.tools.desktop.screen import screen_size as screen_size
from starweave.tools.desktop.screen import screenshot_png as screenshot_png

XDOTOOL_TIMEOUT = 10.0
_BUTTONS = {"left": "1", "middle": "2", "right": "3", "x": "8", "x1": "8", "x2": "9"}


@dataclass(frozen=True)
class XWindow:
    """A visible X top-level window."""

    xid: int
    name: str
    pid: int
    rect: Rect


# Tries of `xdotool search` when a window vanishes under it.
SEARCH_ATTEMPTS = 3


def xdotool(*args: str, timeout: float = XDOTOOL_TIMEOUT) -> str:
    """Run ``xdotool args...`` and return its stdout; a failure raises :class:`DesktopError`."""
    exe = shutil.which("xdotool")
    if exe is None:
        raise DesktopError("xdotool is not installed: run `apt-get install xdotool` (or `make system-deps`).")
    searching = bool(args) and args[0] == "search"
    for attempt in range(SEARCH_ATTEMPTS if searching else 1):
        try:
            proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise DesktopError(f"xdotool {' '.join(args)} did not finish within {timeout}s.") from exc
        if proc.returncode == 0:
            return proc.stdout
        # `search` exits 1 when nothing matches: that is an empty result, not an error.
        if searching and not proc.stderr.strip():
            return ""
        # A window that vanished while `search` walked the tree (an application starting up opens
        # and destroys helper windows) aborts the search with BadWindow: search again.
        if not (searching and "BadWindow" in proc.stderr and attempt + 1 < SEARCH_ATTEMPTS):
            break
    raise DesktopError(f"xdotool {' '.join(args)} failed: {proc.stderr.strip() or proc.returncode}")


def geometry(xid: int) -> Rect:
    """The window's position and size on the screen."""
    fields: dict[str, int] = {}
    for line in xdotool("getwindowgeometry", "--shell", str(xid)).splitlines():
        key, _, value = line.partition("=")
        if value.lstrip("-").isdigit():
            fields[key] = int(value)
    try:
        return Rect(x=fields["X"], y=fields["Y"], width=fields["WIDTH"], height=fields["HEIGHT"])
    except KeyError as exc:
        raise DesktopError(f"xdotool gave no geometry for window {xid}.") from exc


def visible_windows(pid: int) -> list[XWindow]:
    """Visible, non-trivial top-level windows of process ``pid``."""
    found: list[XWindow] = []
    for token in xdotool("search", "--onlyvisible", "--pid", str(pid)).split():
        xid = int(token)
        try:
            rect = geometry(xid)
            name = xdotool("getwindowname", str(xid)).rstrip("\n")
        except DesktopError:
            continue  # the window went away between search and query
        if rect.width > 2 and rect.height > 2:
            found.append(XWindow(xid=xid, name=name, pid=pid, rect=rect))
    return found


def active_window() -> int:
    """The X window that has the keyboard focus (0 when none)."""
    try:
        out = xdotool("getwindowfocus").strip()
    except DesktopError as exc:
        # After the focused window is gone the focus is PointerRoot/None, which xdotool reports
        # as a failure: nobody has the focus.
        if "XGetInputFocus" in str(exc) or "BadWindow" in str(exc):
            return 0
        raise
    return int(out) if out.isdigit() else 0


def window_pid(xid: int) -> int:
    """The process owning X window ``xid`` (0 when unknown)."""
    out = xdotool("getwindowpid", str(xid)).strip() if xid else ""
    return int(out) if out.isdigit() else 0


def focus(xid: int) -> None:
    """Raise the window (no WM needed) and give it the keyboard focus, waiting until it has it."""
    xdotool("windowraise", str(xid))
    xdotool("windowfocus", "--sync", str(xid), timeout=5.0)


def raise_window(xid: int) -> None:
    """Put the window on top of the others (no window manager does it for us); no focus change."""
    xdotool("windowraise", str(xid))


def move(xid: int, x: int, y: int) -> None:
    xdotool("windowmove", "--sync", str(xid), str(x), str(y), timeout=5.0)


def click(x: int, y: int, button: str = "left", double: bool = False) -> None:
    """Move the pointer to (x, y) and click (twice for a double click)."""
    code = _button(button)
    xdotool(*_move_to(x, y), "click", "--repeat", "2" if double else "1", code)


def pointer() -> tuple[int, int]:
    """The pointer's screen position."""
    fields = dict(part.split(":", 1) for part in xdotool("getmouselocation").split() if ":" in part)
    try:
        return int(fields["x"]), int(fields["y"])
    except (KeyError, ValueError) as exc:
        raise DesktopError("xdotool did not report the pointer position.") from exc


def _move_to(x: int, y: int) -> list[str]:
    # `mousemove --sync` waits for the pointer to leave its old position, so it hangs for good
    # when the pointer is already at (x, y) (a second click on the same spot).
    if pointer() == (x, y):
        return []
    return ["mousemove", "--sync", str(x), str(y)]


def drag(move: Drag) -> None:
    """Press at (x1, y1), move in steps over ``duration`` seconds, release at (x2, y2)."""
    code = _button(move.button)
    steps = max(2, min(50, int(move.duration / 0.02)))
    pause = f"{max(move.duration, 0.0) / steps:.3f}"
    args: list[str] = []
    if move.key_hold:
        args += ["keydown", move.key_hold]
    args += [*_move_to(move.x1, move.y1), "mousedown", code]
    for i in range(1, steps + 1):
        px = move.x1 + (move.x2 - move.x1) * i // steps
        py = move.y1 + (move.y2 - move.y1) * i // steps
        args += ["sleep", pause, "mousemove", str(px), str(py)]
    args += ["mouseup", code]
    if move.key_hold:
        args += ["keyup", move.key_hold]
    xdotool(*args, timeout=XDOTOOL_TIMEOUT + move.duration)


def scroll(x: int, y: int, wheel_dist: int) -> None:
    """Turn the wheel ``|wheel_dist|`` notches at (x, y): positive scrolls up, negative down."""
    if wheel_dist == 0:
        return
    button = "4" if wheel_dist > 0 else "5"
    xdotool(*_move_to(x, y), "click", "--repeat", str(abs(wheel_dist)), button)


def run_key_commands(commands: list[list[str]], cancelled: Callable[[], bool] | None = None) -> None:
    """Run translated key commands (see :func:`starweave.tools.desktop.linux.keys.to_xdotool`), stopping
    between two commands once ``cancelled()`` is true (the caller gave up)."""
    for args in commands:
        if cancelled is not None and cancelled():
            return
        xdotool(*args, timeout=XDOTOOL_TIMEOUT + len(args[-1]) * 0.02)


def close(xid: int) -> None:
    """Ask the window to close (WM_DELETE_WINDOW, as a window manager would); the app may ask to save."""
    try:
        from Xlib import X, display, protocol
    except ImportError as exc:
        raise DesktopError(
            "python-xlib is needed to close windows: pip install 'starweave[desktop]'."
        ) from exc
    disp = display.Display()
    try:
        window = disp.create_resource_object("window", xid)
        protocols = disp.intern_atom("WM_PROTOCOLS")
        delete = disp.intern_atom("WM_DELETE_WINDOW")
        event = protocol.event.ClientMessage(
            window=window, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])
        )
        window.send_event(event, event_mask=X.NoEventMask)
        disp.sync()
    finally:
        disp.close()


def _button(button: str) -> str:
    try:
        return _BUTTONS[button.lower()]
    except KeyError as exc:
        raise DesktopError(f"Unknown mouse button {button!r}; use left, right, middle or x.") from exc
