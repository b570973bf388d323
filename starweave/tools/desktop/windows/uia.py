"""The Windows :class:`~starweave.tools.desktop.backend.DesktopBackend` over the ``uiautomation`` package.

``uiautomation`` (and pywin32 through it) is imported lazily; tests pass a fake module with the same
surface (``GetRootControl``, ``Click``/``RightClick``/``MiddleClick``, ``DragDrop``, ``SetCursorPos``,
``WheelUp``/``WheelDown``, ``PressKey``/``ReleaseKey``/``SendKeys``, ``Keys``). Only the fake tree has
been exercised here: this module has not run on a real Windows desktop.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable
from typing import Any

from starweave.errors import DesktopError, WindowNotFound
from starweave.tools.desktop import screen
from starweave.tools.desktop.backend import WalkState, WorkerThread
from starweave.tools.desktop.keys import KeyDown, KeyOp, KeyPress, KeyUp, TypeText, parse_keys
from starweave.tools.desktop.model import ControlInfo, Rect, SettlePolicy, WalkLimits, WindowInfo
from starweave.tools.desktop.settle import fingerprint, wait_until_settled
from starweave.tools.desktop.walk import build_tree, ui_node, walk_controls

LISTED_TYPES = {
    "Button", "Edit", "TabItem", "Document", "ListItem", "MenuItem", "ScrollBar", "TreeItem", "Hyperlink",
    "ComboBox", "RadioButton", "Spinner", "CheckBox", "Group", "Text", "DataItem", "Slider",
}  # fmt: skip
_VK: dict[str, str] = {
    "enter": "VK_RETURN", "tab": "VK_TAB", "escape": "VK_ESCAPE", "backspace": "VK_BACK",
    "delete": "VK_DELETE", "insert": "VK_INSERT", "home": "VK_HOME", "end": "VK_END", "left": "VK_LEFT",
    "right": "VK_RIGHT", "up": "VK_UP", "down": "VK_DOWN", "page_up": "VK_PRIOR", "page_down": "VK_NEXT",
    "space": "VK_SPACE", "caps_lock": "VK_CAPITAL", "print": "VK_SNAPSHOT", "apps": "VK_APPS",
    "pause": "VK_PAUSE", "ctrl": "VK_CONTROL", "shift": "VK_SHIFT", "alt": "VK_MENU", "super": "VK_LWIN",
}  # fmt: skip
_MAXIMIZED, _MINIMIZED = 1, 2


def load_uiautomation() -> Any:
    """The ``uiautomation`` module; raises :class:`DesktopError` naming what to install."""
    try:
        import uiautomation
    except ImportError as exc:
        raise DesktopError(
            "The Windows desktop backend needs uiautomation and pywin32: pip install 'starweave[desktop]'."
        ) from exc
    return uiautomation


def control_type(element: Any) -> str:
    """'ButtonControl' -> 'Button'."""
    name = str(element.ControlTypeName)
    return name[: -len("Control")] if name.endswith("Control") else name


def element_rect(element: Any) -> Rect:
    box = element.BoundingRectangle
    return Rect(x=box.left, y=box.top, width=box.right - box.left, height=box.bottom - box.top)


def vk_name(key: str) -> str:
    """Virtual-key constant name for a neutral key name or an alphanumeric character."""
    if key in _VK:
        return _VK[key]
    if key.startswith("f") and key[1:].isdigit():
        return f"VK_{key.upper()}"
    if len(key) == 1 and key.isalnum() and key.isascii():
        return f"VK_{key.upper()}"
    raise DesktopError(f"No virtual key for {key!r}.")


def escape_send_keys(text: str) -> str:
    """Literal text for ``uiautomation.SendKeys``: braces escaped in one pass ("{" -> "{{}", "}" -> "{}}");
    two chained replace calls would escape the braces the first one added."""
    return "".join(f"{{{ch}}}" if ch in "{}" else ch for ch in text)


class UIAReader:
    """Walk adapter over uiautomation controls."""

    def __init__(self, errors: tuple[type[BaseException], ...], visible_only: bool = True) -> None:
        self.errors = errors
        self.visible_only = visible_only

    def children(self, node: Any, max_count: int, deadline: float) -> list[Any]:
        # Sibling stepping reads only what the walk can use (GetChildren fetches every child).
        first = getattr(node, "GetFirstChildControl", None)
        if first is None:
            return list(node.GetChildren())[:max_count]
        kids: list[Any] = []
        kid = first()
        while kid is not None and len(kids) < max_count and time.monotonic() <= deadline:
            kids.append(kid)
            kid = kid.GetNextSiblingControl()
        return kids

    def describe(self, node: Any, depth: int) -> ControlInfo | None:
        ctype = control_type(node)
        if ctype not in LISTED_TYPES:
            return None
        visible = not bool(node.IsOffscreen)
        rect = element_rect(node)
        if self.visible_only and (not visible or rect.is_empty()):
            return None
        return ControlInfo(
            id="",
            name=str(node.Name or ""),
            control_type=ctype,
            rect=rect,
            is_enabled=bool(node.IsEnabled),
            is_visible=visible,
            automation_id=str(node.AutomationId or ""),
            value=_value(node, self.errors),
            depth=depth,
            source="uia",
        )


class UIABackend:
    """UI Automation desktop backend (see the module docstring)."""

    platform = "windows"

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
        self._worker = WorkerThread("starweave-uia")
        self._windows: dict[str, Any] = {}
        self._walk = WalkState()

    async def list_windows(self) -> list[WindowInfo]:
        return await self._worker.run(self._list_windows)

    async def focus_window(self, window_id: str) -> WindowInfo:
        return await self._worker.run(self._focus_window, window_id)

    async def window_controls(self, window_id: str, limits: WalkLimits | None = None) -> list[ControlInfo]:
        return await self._worker.run(self._window_controls, window_id, limits or WalkLimits())

    async def ui_tree(self, window_id: str, limits: WalkLimits | None = None) -> dict[str, Any]:
        return await self._worker.run(self._ui_tree, window_id, limits or WalkLimits())

    async def screenshot(self, window_id: str | None = None) -> bytes:
        rect = None if window_id is None else element_rect(await self._worker.run(self._window, window_id))
        return await self._worker.run(screen.screenshot_png, rect)

    async def click(
        self,
        control_id: str | None = None,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        double: bool = False,
    ) -> None:
        await self._worker.run(self._click, control_id, x, y, button, double)

    async def drag(
        self,
        x1: int,
        y1: int,
        x2: int,
        y2: int,
        button: str = "left",
        duration: float = 1.0,
        key_hold: str | None = None,
    ) -> None:
        await self._worker.run(self._drag, x1, y1, x2, y2, duration, key_hold)

    async def set_text(self, control_id: str, text: str, clear: bool = False) -> None:
        await self._worker.run(self._set_text, control_id, text, clear)

    async def type_keys(self, keys: str, control_id: str | None = None) -> None:
        ops = parse_keys(keys)
        await self._worker.run(self._type_keys, ops, control_id)

    async def scroll(self, control_id: str, wheel_dist: int) -> None:
        await self._worker.run(self._scroll, control_id, wheel_dist)

    async def get_text(self, control_id: str) -> str:
        return await self._worker.run(self._get_text, control_id)

    async def launch(self, command: str, wait: float = 15.0) -> int:
        return await self._worker.run(_launch, command)

    async def close_window(self, window_id: str) -> bool:
        return await self._worker.run(self._close_window, window_id)

    async def aclose(self) -> None:
        self._worker.shutdown()

    # -- blocking implementations ----------------------------------------------------------------
    def _list_windows(self) -> list[WindowInfo]:
        windows: dict[str, Any] = {}
        infos = []
        for element in self.auto.GetRootControl().GetChildren():
            try:
                if element.IsOffscreen or not element.Name or control_type(element) not in {"Window", "Pane"}:
                    continue
                window_id = str(element.NativeWindowHandle)
                infos.append(self._window_info(window_id, element))
            except self._errors:
                continue
            windows[window_id] = element
        self._windows = windows
        return infos

    def _window_info(self, window_id: str, element: Any) -> WindowInfo:
        state = self._visual_state(element)
        return WindowInfo(
            id=window_id,
            name=str(element.Name),
            title=str(element.Name),
            handle=int(element.NativeWindowHandle),
            class_name=str(element.ClassName or ""),
            process_id=int(element.ProcessId),
            is_minimized=state == _MINIMIZED,
            is_maximized=state == _MAXIMIZED,
            is_active=bool(getattr(element, "HasKeyboardFocus", False)),
            rectangle=element_rect(element),
            control_type=control_type(element),
        )

    def _visual_state(self, element: Any) -> int:
        try:
            return int(element.GetWindowPattern().WindowVisualState)
        except self._soft_errors:
            return 0

    def _window(self, window_id: str) -> Any:
        if str(window_id) not in self._windows:
            self._list_windows()
        try:
            return self._windows[str(window_id)]
        except KeyError as exc:
            raise WindowNotFound(
                f"Window '{window_id}' not found. Open windows: {list(self._windows)}; "
                "list the windows again."
            ) from exc

    def _focus_window(self, window_id: str) -> WindowInfo:
        element = self._window(window_id)
        try:
            element.SetActive()
            element.SetFocus()
        except self._errors as exc:
            raise DesktopError(f"Failed to set focus on window: {exc}") from exc
        return self._window_info(str(window_id), element)

    def _window_controls(self, window_id: str, limits: WalkLimits) -> list[ControlInfo]:
        reader = UIAReader(self._errors)
        result = walk_controls(self._window(window_id), reader, limits, cancelled=self._worker.cancelled)
        self._walk.replace(str(window_id), result.controls, result.elements)
        return result.controls

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
            self._acting(lambda: self._mouse(x, y, button, double))
            return
        info, _ = self._walk.get(control_id)
        cx, cy = info.rect.center
        self._acting(lambda: self._mouse(cx, cy, button, double))

    def _drag(self, x1: int, y1: int, x2: int, y2: int, duration: float, key_hold: str | None) -> None:
        def act() -> None:
            hold = getattr(self.auto.Keys, vk_name(key_hold)) if key_hold else None
            if hold is not None:
                self.auto.PressKey(hold)
            try:
                self.auto.DragDrop(x1, y1, x2, y2, moveSpeed=max(0.1, 1.0 / max(duration, 0.1)))
            finally:
                if hold is not None:
                    self.auto.ReleaseKey(hold)

        self._acting(act)

    def _set_text(self, control_id: str, text: str, clear: bool) -> None:
        _, element = self._walk.get(control_id)
        try:
            pattern = element.GetValuePattern()
            current = "" if clear else str(pattern.Value or "")
            self._acting(lambda: pattern.SetValue(current + text))
        except self._soft_errors as exc:
            raise DesktopError(f"Control '{control_id}' does not accept text: {exc}") from exc

    def _type_keys(self, ops: list[KeyOp], control_id: str | None) -> None:
        if control_id is not None:
            _, element = self._walk.get(control_id)
            element.SetFocus()
        self._acting(lambda: self._send(ops))

    def _send(self, ops: list[KeyOp]) -> None:
        keys = self.auto.Keys
        for op in ops:
            if self._worker.cancelled():
                return  # the caller gave up: send no more keys
            if isinstance(op, TypeText):
                self.auto.SendKeys(escape_send_keys(op.text), interval=0.01)
            elif isinstance(op, KeyDown):
                self.auto.PressKey(getattr(keys, vk_name(op.key)))
            elif isinstance(op, KeyUp):
                self.auto.ReleaseKey(getattr(keys, vk_name(op.key)))
            elif isinstance(op, KeyPress):
                mods = [getattr(keys, vk_name(m)) for m in op.modifiers]
                for mod in mods:
                    self.auto.PressKey(mod)
                key = getattr(keys, vk_name(op.key))
                self.auto.PressKey(key)
                self.auto.ReleaseKey(key)
                for mod in reversed(mods):
                    self.auto.ReleaseKey(mod)

    def _scroll(self, control_id: str, wheel_dist: int) -> None:
        info, _ = self._walk.get(control_id)

        def act() -> None:
            self.auto.SetCursorPos(*info.rect.center)
            if wheel_dist > 0:
                self.auto.WheelUp(wheel_dist)
            elif wheel_dist < 0:
                self.auto.WheelDown(-wheel_dist)

        self._acting(act)

    def _get_text(self, control_id: str) -> str:
        _, element = self._walk.get(control_id)
        return _value(element, self._errors) or str(element.Name or "")

    def _close_window(self, window_id: str) -> bool:
        element = self._window(window_id)
        try:
            element.GetWindowPattern().Close()
        except self._soft_errors as exc:
            raise DesktopError(f"Failed to close window '{window_id}': {exc}") from exc
        self._windows.pop(str(window_id), None)
        return True


def _launch(command: str) -> int:
    try:
        proc = subprocess.Popen(shlex.split(command, posix=False))
    except OSError as exc:
        raise DesktopError(f"Failed to launch application {command!r}: {exc}") from exc
    return proc.pid


def _value(element: Any, errors: tuple[type[BaseException], ...]) -> str:
    try:
        return str(element.GetValuePattern().Value or "")
    except (*errors, AttributeError):  # type: ignore[misc]
        return ""
