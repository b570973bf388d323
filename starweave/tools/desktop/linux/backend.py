"""The Linux :class:`~starweave.tools.desktop.backend.DesktopBackend`: AT-SPI for windows, controls and
text; X11 (xdotool, mss, python-xlib) for input, focus and screenshots.

Needs DISPLAY and DBUS_SESSION_BUS_ADDRESS of a session whose apps speak AT-SPI (GTK does by default).
"""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import time
from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.backend import WalkState, WorkerThread, known_window
from starweave.tools.desktop.keys import text_ops
from starweave.tools.desktop.linux import atspi, x11
from starweave.tools.desktop.linux.keys import to_xdotool, translate_keys
from starweave.tools.desktop.model import ControlInfo, Drag, SettlePolicy, WalkLimits, WindowInfo
from starweave.tools.desktop.settle import fingerprint, poll_until, wait_until_settled
from starweave.tools.desktop.walk import WalkResult, build_tree, ui_node, walk_controls

# Top-level roles of an application's own (usually modal) dialogs, walked with its main window.
DIALOG_ROLES = {"dialog", "file chooser", "alert"}


class LinuxDesktopBackend:
    """AT-SPI + X11 desktop backend (see the module docstring)."""

    platform = "linux"

    def __init__(self, settle: SettlePolicy | None = None) -> None:
        if not os.environ.get("DISPLAY"):
            raise DesktopError("DISPLAY is not set: run under an X11 session or Xvfb (xvfb-run -a ...).")
        self.settle = settle or SettlePolicy()
        self._worker = WorkerThread("starweave-atspi")
        self._windows: dict[str, atspi.A11yWindow] = {}
        self._walk = WalkState()
        # The windows of the last walk: the walked window first, then its application's dialogs.
        self._walked: list[str] = []

    # -- windows ---------------------------------------------------------------------------------
    async def list_windows(self) -> list[WindowInfo]:
        return await self._worker.run(self._list_windows)

    async def focus_window(self, window_id: str) -> WindowInfo:
        return await self._worker.run(self._focus_window, window_id)

    async def close_window(self, window_id: str) -> bool:
        return await self._worker.run(self._close_window, window_id)

    async def launch(self, command: str, wait: float = 15.0) -> int:
        return await self._worker.run(self._launch, command, wait)

    # -- controls --------------------------------------------------------------------------------
    async def window_controls(self, window_id: str, limits: WalkLimits | None = None) -> list[ControlInfo]:
        return await self._worker.run(self._window_controls, window_id, limits or WalkLimits())

    async def ui_tree(self, window_id: str, limits: WalkLimits | None = None) -> dict[str, Any]:
        return await self._worker.run(self._ui_tree, window_id, limits or WalkLimits())

    async def get_text(self, control_id: str) -> str:
        return await self._worker.run(self._get_text, control_id)

    # -- screen and input ------------------------------------------------------------------------
    async def screenshot(self, window_id: str | None = None) -> bytes:
        return await self._worker.run(self._screenshot, window_id)

    async def click(
        self,
        control_id: str | None = None,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        double: bool = False,
    ) -> None:
        await self._worker.run(self._click, control_id, x, y, button, double)

    async def drag(self, move: Drag) -> None:
        def act() -> None:
            self._bring_up_walked(None)  # no window manager: raise what the agent is looking at
            self._acting(lambda: x11.drag(move))

        await self._worker.run(act)

    async def set_text(self, control_id: str, text: str, clear: bool = False) -> None:
        await self._worker.run(self._set_text, control_id, text, clear)

    async def type_keys(self, keys: str, control_id: str | None = None) -> None:
        commands = translate_keys(keys)  # parse first: a syntax error must not touch the UI
        await self._worker.run(self._type_keys, commands, control_id)

    async def scroll(self, control_id: str, wheel_dist: int) -> None:
        await self._worker.run(self._scroll, control_id, wheel_dist)

    async def aclose(self) -> None:
        self._worker.shutdown()

    # -- blocking implementations (worker thread) ------------------------------------------------
    def _list_windows(self) -> list[WindowInfo]:
        active = x11.active_window()
        windows: dict[str, atspi.A11yWindow] = {}
        infos: list[WindowInfo] = []
        for app in atspi.applications():
            try:
                tops = self._app_windows(app)
                listed = [(str(top.xid), top, _window_info(str(top.xid), top, active)) for top in tops]
            except _broken_errors():
                # An application that quits while we look, or one whose accessibility is broken, is
                # not listed; the others still are.
                continue
            for window_id, top, info in listed:
                windows[window_id] = top
                infos.append(info)
        self._windows = windows
        return infos

    def _app_windows(self, app: Any) -> list[atspi.A11yWindow]:
        """The application's accessible top-levels that have a visible X window."""
        tops = atspi.toplevels(app)
        xwins = x11.visible_windows(app.get_process_id()) if tops else []
        _match_x_windows(tops, xwins)
        return [top for top in tops if top.xid != 0]

    def _dialogs_of(self, window_id: str, win: atspi.A11yWindow) -> list[tuple[str, atspi.A11yWindow]]:
        """Visible dialog-type top-levels of the window's own application (a Save As dialog is a
        window of its own), read fresh: they may have opened since the windows were listed."""
        if win.role in DIALOG_ROLES:
            return []
        try:
            app = win.accessible.get_application()
            if app is None:
                return []
            app.clear_cache()
            tops = self._app_windows(app)
        except _broken_errors():
            return []  # the dialogs are a bonus: never lose the main window's walk over them
        found = []
        for top in tops:
            if top.role in DIALOG_ROLES and str(top.xid) != window_id:
                self._windows[str(top.xid)] = top
                found.append((str(top.xid), top))
        return found

    def _window(self, window_id: str) -> atspi.A11yWindow:
        return known_window(window_id, lambda: self._windows, self._list_windows)

    def _focus_window(self, window_id: str) -> WindowInfo:
        win = self._window(window_id)
        x11.focus(win.xid)
        return _window_info(str(window_id), win, x11.active_window())

    def _close_window(self, window_id: str) -> bool:
        win = self._window(window_id)
        x11.close(win.xid)
        gone = poll_until(lambda: all(w.xid != win.xid for w in x11.visible_windows(win.pid)), timeout=3.0)
        if gone:
            self._windows.pop(str(window_id), None)
        return bool(gone)

    def _launch(self, command: str, wait: float) -> int:
        argv = shlex.split(command)
        if not argv:
            raise DesktopError("The command to launch is empty.")
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise DesktopError(f"Failed to launch application {command!r}: {exc}") from exc

        def shown() -> bool:
            if proc.poll() is not None:
                return True  # handed over to a running instance, or failed: nothing to wait for
            return any(w.process_id == proc.pid for w in self._list_windows())

        poll_until(shown, timeout=wait, interval=0.1)
        if proc.poll() not in (None, 0):
            raise DesktopError(f"Failed to launch application {command!r}: it exited with {proc.returncode}.")
        return proc.pid

    def _window_controls(self, window_id: str, limits: WalkLimits) -> list[ControlInfo]:
        window_id = str(window_id)
        win = self._window(window_id)
        parts = [(window_id, win), *self._dialogs_of(window_id, win)]
        started = time.monotonic()
        nodes_left = limits.max_nodes
        results: dict[str, WalkResult[Any]] = {}
        # Dialogs first, so a huge main window (a spreadsheet) cannot starve the modal dialog that
        # actually takes the input; the main window's controls are still listed first.
        for part_id, part in reversed(parts):
            seconds_left = limits.max_seconds - (time.monotonic() - started)
            if nodes_left <= 0 or seconds_left <= 0 or self._worker.cancelled():
                break
            try:
                part.x_rect = x11.geometry(part.xid)  # the window may have moved since it was listed
                part.accessible.clear_cache()
                reader = atspi.ControlReader(part)
            except _broken_errors():
                if part_id == window_id:
                    raise
                continue  # a dialog that closed meanwhile
            sub = limits.model_copy(update={"max_nodes": nodes_left, "max_seconds": seconds_left})
            results[part_id] = walk_controls(part.accessible, reader, sub, cancelled=self._worker.cancelled)
            nodes_left -= results[part_id].visited
        controls: list[ControlInfo] = []
        elements: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for part_id, _ in parts:
            if part_id not in results:
                continue
            result = results[part_id]
            for info in result.controls:
                control_id = str(len(controls) + 1)
                controls.append(info.model_copy(update={"id": control_id}))
                elements[control_id] = result.elements[info.id]
                if part_id != window_id:
                    owners[control_id] = part_id
        self._walk.replace(window_id, controls, elements, owners)
        self._walked = [part_id for part_id, _ in parts if part_id in results]
        return controls

    def _ui_tree(self, window_id: str, limits: WalkLimits) -> dict[str, Any]:
        win = self._window(window_id)
        win.x_rect = x11.geometry(win.xid)
        reader = atspi.ControlReader(win, visible_only=False)
        window_rect = win.rect()
        counter = itertools.count()

        def label(node: Any, depth: int) -> dict[str, Any]:
            props = reader.label(node)
            return ui_node(
                next(counter), props["name"], props["control_type"], props["rect"], window_rect, depth
            )

        return build_tree(win.accessible, reader, label, limits, cancelled=self._worker.cancelled)

    def _get_text(self, control_id: str) -> str:
        _, node = self._walk.get(control_id)
        return atspi.text_of(node)

    def _screenshot(self, window_id: str | None) -> bytes:
        if window_id is None:
            return x11.screenshot_png()
        win = self._window(window_id)
        # No window manager: another window may cover this one; raise it (and its dialogs) first.
        if window_id == self._walk.window_id:
            self._acting(lambda: self._bring_up_walked(None), quick=True)
        else:
            self._acting(lambda: x11.raise_window(win.xid), quick=True)
        win.x_rect = x11.geometry(win.xid)
        return x11.screenshot_png(win.rect())

    def _focus_in_walked_app(self) -> bool:
        window = self._windows.get(self._walk.window_id or "")
        if window is None:
            return False
        try:
            return x11.window_pid(x11.active_window()) == window.pid
        except DesktopError:
            return False

    def _bring_up_walked(self, control_id: str | None) -> None:
        """Raise the walked window and then its dialogs (no window manager keeps a modal dialog on
        top), and focus the window holding ``control_id`` (the topmost one when None)."""
        walked = [w for w in self._walked if w in self._windows]
        if not walked:
            return
        target = self._walk.owner(control_id) if control_id is not None else walked[-1]
        for window_id in walked:
            if window_id != target:
                try:
                    x11.raise_window(self._windows[window_id].xid)
                except DesktopError:
                    continue  # closed since the walk
        if target is not None and target in self._windows:
            x11.focus(self._windows[target].xid)

    def _focus_walked_window(self, control_id: str | None = None) -> None:
        self._bring_up_walked(control_id)

    def _acting(self, action: Any, quick: bool = False) -> None:
        """Run an input action, then wait until the screen settles (briefly when ``quick``)."""
        before = fingerprint(x11.grab_raw())
        action()
        policy = (
            self.settle.model_copy(update={"first_change": 0.15, "max_wait": 1.0}) if quick else self.settle
        )
        wait_until_settled(x11.grab_raw, policy, before)

    def _click(self, control_id: str | None, x: int | None, y: int | None, button: str, double: bool) -> None:
        if control_id is None:
            if x is None or y is None:
                raise DesktopError("click needs a control id or both x and y screen coordinates.")
            self._bring_up_walked(None)  # no window manager: raise what the agent is looking at
            self._acting(lambda: x11.click(x, y, button, double))
            return
        info, node = self._walk.get(control_id)
        self._focus_walked_window(control_id)
        if info.rect.is_empty():
            # Not on screen (e.g. an item of a closed menu): use its accessible action instead.
            self._acting(lambda: atspi.do_action(node))
            return
        cx, cy = info.rect.center
        self._acting(lambda: x11.click(cx, cy, button, double))

    def _set_text(self, control_id: str, text: str, clear: bool) -> None:
        info, node = self._walk.get(control_id)
        if atspi.set_text(node, text, clear):
            self._acting(lambda: None)  # the app redraws asynchronously
            return
        # Not editable through AT-SPI: focus it and type like a user. The text is literal: it never
        # goes through the key parser ("50% ~now" must not press alt and Enter).
        commands = [["key", "--clearmodifiers", "ctrl+a"]] if clear else []
        commands += to_xdotool(text_ops(text))
        self._focus_walked_window(control_id)
        cx, cy = info.rect.center

        def act() -> None:
            x11.click(cx, cy)
            x11.run_key_commands(commands, self._worker.cancelled)

        self._acting(act)

    def _type_keys(self, commands: list[list[str]], control_id: str | None) -> None:
        # Keys for "whatever has focus" stay in the application's own dialog (a Save As dialog is a
        # window of its own): the walked window is focused only when the focus is elsewhere.
        if control_id is not None or not self._focus_in_walked_app():
            self._focus_walked_window(control_id)
        if control_id is not None:
            info, node = self._walk.get(control_id)
            if not atspi.grab_focus(node) and not info.rect.is_empty():
                x11.click(*info.rect.center)
        self._acting(lambda: x11.run_key_commands(commands, self._worker.cancelled))

    def _scroll(self, control_id: str, wheel_dist: int) -> None:
        info, _ = self._walk.get(control_id)
        self._focus_walked_window(control_id)
        cx, cy = info.rect.center
        self._acting(lambda: x11.scroll(cx, cy, wheel_dist))


def _broken_errors() -> tuple[type[BaseException], ...]:
    """What a vanished or broken window raises (AT-SPI errors, failed X queries)."""
    return (*atspi.errors(), DesktopError)


def _match_x_windows(tops: list[atspi.A11yWindow], xwins: list[x11.XWindow]) -> None:
    """Pair accessible top-levels with X windows of the same process: by title, then the one left."""
    free = list(xwins)
    for top in tops:
        same = [w for w in free if w.name == top.name]
        if same:
            _assign(top, same[0], free)
    unmatched = [t for t in tops if t.xid == 0]
    if len(unmatched) == 1 and len(free) == 1:
        _assign(unmatched[0], free[0], free)


def _assign(top: atspi.A11yWindow, xwin: x11.XWindow, free: list[x11.XWindow]) -> None:
    top.xid = xwin.xid
    top.x_rect = xwin.rect
    free.remove(xwin)


def _window_info(window_id: str, win: atspi.A11yWindow, active_xid: int) -> WindowInfo:
    return WindowInfo(
        id=window_id,
        name=win.name,
        title=win.name,
        handle=win.xid,
        class_name=win.role,
        process_id=win.pid,
        is_visible=True,
        is_minimized="iconified" in win.states,
        is_maximized="maximized" in win.states,
        is_active=win.xid == active_xid,
        rectangle=win.rect(),
        control_type="Window",
        app_name=win.app_name,
    )
