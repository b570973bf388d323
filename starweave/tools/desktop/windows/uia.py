"""The Windows :class:`~starweave.tools.desktop.backend.DesktopBackend` over the ``uiautomation`` package.

``uiautomation`` (and pywin32 through it) is imported lazily; tests pass a fake module with the same
surface (``GetRootControl``, ``Click``/``RightClick``/``MiddleClick``, ``DragDrop``, ``SetCursorPos``,
``WheelUp``/``WheelDown``, ``PressKey``/``ReleaseKey``/``SendKeys``, ``Keys``, and optionally
``UIAutomationInitializerInThread``, ``GetForegroundWindow``, ``GetFocusedControl``). Only the fake
tree has been exercised here: this module has not run on a real Windows desktop.

Every UIA call runs on one worker thread, which initialises COM before its first call. The behaviour
mirrors the Linux backend: an application's own dialog windows are walked with its window, the window
owning a control is focused before acting on it, and ``launch`` waits for the application's window.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

from starweave.errors import DesktopError
from starweave.tools.desktop import screen
from starweave.tools.desktop.backend import WalkState, WorkerThread, known_window
from starweave.tools.desktop.keys import KeyOp, KeyPress, parse_keys, text_ops
from starweave.tools.desktop.model import ControlInfo, Drag, SettlePolicy, WalkLimits, WindowInfo
from starweave.tools.desktop.settle import fingerprint, wait_until_settled
from starweave.tools.desktop.walk import build_tree, ui_node
from starweave.tools.desktop.windows.com import ComApartment
from starweave.tools.desktop.windows.elements import (
    UIAReader,
    control_type,
    element_rect,
    element_value,
    load_uiautomation,
)
from starweave.tools.desktop.windows.sendkeys import send_ops, vk_name
from starweave.tools.desktop.windows.toplevel import dialogs_of, poll_cancellable, spawn, walk_parts

T = TypeVar("T")
_MAXIMIZED, _MINIMIZED = 1, 2
# How long aclose waits for the worker thread to leave COM (a stuck call keeps it busy; it is a daemon).
_RELEASE_TIMEOUT = 2.0


class UIABackend:
    """UI Automation desktop backend (see the module docstring)."""

    platform = "windows"
    # Seconds between window-list polls while ``launch`` waits for the application's window.
    launch_poll = 0.1
    # How long ``close_window`` waits for the window to go, and how often it looks.
    close_wait, close_poll = 3.0, 0.05

    def __init__(
        self,
        settle: SettlePolicy | None = None,
        auto: Any = None,
        observe: Callable[[], bytes] | None = None,
    ) -> None:
        self.auto = auto if auto is not None else load_uiautomation()
        self.settle = settle or SettlePolicy()
        self._observe = observe or screen.grab_raw
        self._errors: tuple[type[BaseException], ...] = (OSError, RuntimeError, LookupError)
        com_error = getattr(self.auto, "COMError", None)
        if isinstance(com_error, type) and issubclass(com_error, BaseException):
            self._errors += (com_error,)
        # A missing pattern shows up as AttributeError on some elements.
        self._soft_errors: tuple[type[BaseException], ...] = (*self._errors, AttributeError)
        self._com = ComApartment(self.auto, self._errors)
        self._worker = WorkerThread("starweave-uia")
        self._closed = False
        self._windows: dict[str, Any] = {}
        self._walk = WalkState()
        # The windows of the last walk: the walked window first, then its application's dialogs.
        self._walked: list[str] = []

    async def list_windows(self) -> list[WindowInfo]:
        return await self._run(self._list_windows)

    async def focus_window(self, window_id: str) -> WindowInfo:
        return await self._run(self._focus_window, window_id)

    async def window_controls(self, window_id: str, limits: WalkLimits | None = None) -> list[ControlInfo]:
        return await self._run(self._window_controls, window_id, limits or WalkLimits())

    async def ui_tree(self, window_id: str, limits: WalkLimits | None = None) -> dict[str, Any]:
        return await self._run(self._ui_tree, window_id, limits or WalkLimits())

    async def screenshot(self, window_id: str | None = None) -> bytes:
        return await self._run(self._screenshot, window_id)

    async def click(
        self,
        control_id: str | None = None,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        double: bool = False,
    ) -> None:
        await self._run(self._click, control_id, x, y, button, double)

    async def drag(self, move: Drag) -> None:
        await self._run(self._drag, move)

    async def set_text(self, control_id: str, text: str, clear: bool = False) -> None:
        await self._run(self._set_text, control_id, text, clear)

    async def type_keys(self, keys: str, control_id: str | None = None) -> None:
        ops = parse_keys(keys)  # parse first: a syntax error must not touch the UI
        await self._run(self._type_keys, ops, control_id)

    async def scroll(self, control_id: str, wheel_dist: int) -> None:
        await self._run(self._scroll, control_id, wheel_dist)

    async def get_text(self, control_id: str) -> str:
        return await self._run(self._get_text, control_id)

    async def launch(self, command: str, wait: float = 15.0) -> int:
        return await self._run(self._launch, command, wait)

    async def close_window(self, window_id: str) -> bool:
        return await self._run(self._close_window, window_id)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._com.active:
                # COM is left on the thread that entered it; a call stuck on that thread keeps it.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._worker.run(self._com.release), _RELEASE_TIMEOUT)
        finally:
            self._worker.shutdown()

    # -- worker thread ---------------------------------------------------------------------------
    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the worker thread, COM initialised there before its first UIA call."""
        return await self._worker.run(self._in_com, fn, *args)

    def _in_com(self, fn: Callable[..., T], *args: Any) -> T:
        self._com.ensure()
        return fn(*args)

    # -- windows ---------------------------------------------------------------------------------
    def _list_windows(self) -> list[WindowInfo]:
        foreground = self._foreground()
        windows: dict[str, Any] = {}
        infos = []
        for element in self.auto.GetRootControl().GetChildren():
            try:
                if element.IsOffscreen or not element.Name or control_type(element) not in {"Window", "Pane"}:
                    continue
                window_id = str(element.NativeWindowHandle)
                infos.append(self._window_info(window_id, element, foreground))
            except self._errors:
                continue
            windows[window_id] = element
        self._windows = windows
        return infos

    def _foreground(self) -> int | None:
        """The foreground window's handle, when the module can tell."""
        get = getattr(self.auto, "GetForegroundWindow", None)
        if get is None:
            return None
        try:
            return int(get())
        except self._errors:
            return None

    def _window_info(self, window_id: str, element: Any, foreground: int | None = None) -> WindowInfo:
        state = self._visual_state(element)
        handle = int(element.NativeWindowHandle)
        # The foreground window is the active one (as on Linux); the window element itself rarely
        # has the keyboard focus (a control inside it does).
        active = (
            handle == foreground
            if foreground is not None
            else bool(getattr(element, "HasKeyboardFocus", False))
        )
        return WindowInfo(
            id=window_id,
            name=str(element.Name),
            title=str(element.Name),
            handle=handle,
            class_name=str(element.ClassName or ""),
            process_id=int(element.ProcessId),
            is_minimized=state == _MINIMIZED,
            is_maximized=state == _MAXIMIZED,
            is_active=active,
            rectangle=element_rect(element),
            control_type=control_type(element),
        )

    def _visual_state(self, element: Any) -> int:
        try:
            return int(element.GetWindowPattern().WindowVisualState)
        except self._soft_errors:
            return 0

    def _window(self, window_id: str) -> Any:
        return known_window(window_id, lambda: self._windows, self._list_windows)

    def _activate(self, window_id: str, element: Any) -> None:
        try:
            element.SetActive()
            element.SetFocus()
        except self._soft_errors as exc:
            raise DesktopError(
                f"Could not focus window '{window_id}': {exc}. It may have closed; list the windows again."
            ) from exc

    def _focus_window(self, window_id: str) -> WindowInfo:
        element = self._window(window_id)
        self._activate(str(window_id), element)
        return self._window_info(str(window_id), element, self._foreground())

    def _focus_walked(self, control_id: str | None) -> None:
        """Focus the window holding ``control_id`` (the walked window or one of its dialogs); with no
        control, the topmost window of the last walk: its first dialog (the desktop's children come in
        z-order, topmost first), else the window itself."""
        walked = [w for w in self._walked if w in self._windows]
        if not walked:
            return
        target = self._walk.owner(control_id) if control_id is not None else walked[min(1, len(walked) - 1)]
        if target is not None and target in self._windows:
            self._activate(target, self._windows[target])

    def _focus_in_walked_app(self) -> bool:
        """True when the keyboard focus is in the walked window's process (e.g. in its own dialog)."""
        window = self._windows.get(self._walk.window_id or "")
        focused = getattr(self.auto, "GetFocusedControl", None)
        if window is None or focused is None:
            return False
        try:
            return int(focused().ProcessId) == int(window.ProcessId)
        except self._soft_errors:
            return False

    def _close_window(self, window_id: str) -> bool:
        element = self._window(window_id)
        try:
            handle = int(element.NativeWindowHandle)
            element.GetWindowPattern().Close()
        except self._soft_errors as exc:
            raise DesktopError(f"Failed to close window '{window_id}': {exc}") from exc

        def gone() -> bool:
            try:
                return all(
                    int(top.NativeWindowHandle) != handle for top in self.auto.GetRootControl().GetChildren()
                )
            except self._errors:
                return False

        # The application may ask to save first: the window is then still there.
        closed = poll_cancellable(gone, self.close_wait, self.close_poll, self._worker.cancelled)
        if closed:
            self._windows.pop(str(window_id), None)
        return closed

    def _launch(self, command: str, wait: float) -> int:
        proc = spawn(command)

        def shown() -> bool:
            if proc.poll() is not None:
                return True  # handed over to a running instance, or failed: nothing to wait for
            return any(w.process_id == proc.pid for w in self._list_windows())

        poll_cancellable(shown, wait, self.launch_poll, self._worker.cancelled)
        if proc.poll() not in (None, 0):
            raise DesktopError(f"Failed to launch application {command!r}: it exited with {proc.returncode}.")
        return proc.pid

    # -- controls --------------------------------------------------------------------------------
    def _window_controls(self, window_id: str, limits: WalkLimits) -> list[ControlInfo]:
        window_id = str(window_id)
        element = self._window(window_id)
        dialogs = dialogs_of(self.auto, window_id, element, self._errors)
        self._windows.update(dialogs)  # so the window owning a control can be focused
        walk = walk_parts(
            [(window_id, element), *dialogs], UIAReader(self._errors), limits, self._worker.cancelled
        )
        self._walk.replace(window_id, walk.controls, walk.elements, walk.owners)
        self._walked = walk.walked
        return walk.controls

    def _ui_tree(self, window_id: str, limits: WalkLimits) -> dict[str, Any]:
        root = self._window(window_id)
        window_rect = element_rect(root)
        counter = iter(range(limits.max_nodes + 1))

        def label(node: Any, depth: int) -> dict[str, Any]:
            return ui_node(
                next(counter),
                str(node.Name or ""),
                control_type(node),
                element_rect(node),
                window_rect,
                depth,
            )

        reader = UIAReader(self._errors, visible_only=False)
        return build_tree(root, reader, label, limits, cancelled=self._worker.cancelled)

    def _get_text(self, control_id: str) -> str:
        _, element = self._walk.get(control_id)
        return element_value(element, self._errors) or str(element.Name or "")

    def _screenshot(self, window_id: str | None) -> bytes:
        rect = None if window_id is None else element_rect(self._window(window_id))
        return screen.screenshot_png(rect)

    # -- input -----------------------------------------------------------------------------------
    def _acting(self, action: Callable[[], None]) -> None:
        before = fingerprint(self._observe())
        action()
        wait_until_settled(self._observe, self.settle, before)

    def _mouse(self, x: int, y: int, button: str, double: bool) -> None:
        clicks = {"left": self.auto.Click, "right": self.auto.RightClick, "middle": self.auto.MiddleClick}
        if button not in clicks:
            raise DesktopError(f"Unknown mouse button {button!r}; use left, right or middle.")
        for _ in range(2 if double else 1):
            clicks[button](x, y)

    def _click(self, control_id: str | None, x: int | None, y: int | None, button: str, double: bool) -> None:
        if control_id is None:
            if x is None or y is None:
                raise DesktopError("click needs a control id or both x and y screen coordinates.")
            self._focus_walked(None)  # the click lands in what the agent is looking at
            self._acting(lambda: self._mouse(x, y, button, double))
            return
        info, _ = self._walk.get(control_id)
        self._focus_walked(control_id)
        cx, cy = info.rect.center
        self._acting(lambda: self._mouse(cx, cy, button, double))

    def _drag(self, move: Drag) -> None:
        hold = getattr(self.auto.Keys, vk_name(move.key_hold)) if move.key_hold else None
        self._focus_walked(None)

        def act() -> None:
            if hold is not None:
                self.auto.PressKey(hold)
            try:
                speed = max(0.1, 1.0 / max(move.duration, 0.1))
                self.auto.DragDrop(move.x1, move.y1, move.x2, move.y2, moveSpeed=speed)
            finally:
                if hold is not None:
                    self.auto.ReleaseKey(hold)

        self._acting(act)

    def _set_text(self, control_id: str, text: str, clear: bool) -> None:
        info, element = self._walk.get(control_id)
        if self._set_value(element, text, clear):
            return
        # No writable ValuePattern: focus the control and type like a user.
        if info.rect.is_empty():
            raise DesktopError(
                f"Control '{control_id}' does not accept text and is not on screen to type into."
            )
        # The text is literal: it never goes through the key parser ("50% ~now" must not press alt).
        ops: list[KeyOp] = [KeyPress("a", ("ctrl",))] if clear else []
        ops += text_ops(text)
        self._focus_walked(control_id)
        cx, cy = info.rect.center

        def act() -> None:
            self._mouse(cx, cy, "left", False)
            send_ops(self.auto, ops, self._worker.cancelled)

        self._acting(act)

    def _set_value(self, element: Any, text: str, clear: bool) -> bool:
        """Write through the ValuePattern; False when the element has none or it is read-only."""
        try:
            pattern = element.GetValuePattern()
            if bool(getattr(pattern, "IsReadOnly", False)):
                return False
            current = "" if clear else str(pattern.Value or "")
        except self._soft_errors:
            return False
        before = fingerprint(self._observe())
        try:
            pattern.SetValue(current + text)
        except self._soft_errors:
            return False  # refused as a whole: typing it instead cannot double the text
        wait_until_settled(self._observe, self.settle, before)
        return True

    def _type_keys(self, ops: list[KeyOp], control_id: str | None) -> None:
        # Keys for "whatever has focus" stay in the application's own dialog: the walked window is
        # focused only when the focus is elsewhere.
        target = self._walk.get(control_id) if control_id is not None else None
        if control_id is not None or not self._focus_in_walked_app():
            self._focus_walked(control_id)
        if target is not None:
            info, element = target
            try:
                element.SetFocus()
            except self._soft_errors as exc:
                if info.rect.is_empty():
                    raise DesktopError(
                        f"Could not focus control '{control_id}' to type into it: {exc}"
                    ) from exc
                self._mouse(*info.rect.center, "left", False)
        self._acting(lambda: send_ops(self.auto, ops, self._worker.cancelled))

    def _scroll(self, control_id: str, wheel_dist: int) -> None:
        info, _ = self._walk.get(control_id)
        self._focus_walked(control_id)

        def act() -> None:
            self.auto.SetCursorPos(*info.rect.center)
            if wheel_dist > 0:
                self.auto.WheelUp(wheel_dist)
            elif wheel_dist < 0:
                self.auto.WheelDown(-wheel_dist)

        self._acting(act)
