"""Keyboard input through ``uiautomation``: parsed key operations to virtual keys and ``SendKeys`` text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.keys import KeyDown, KeyOp, KeyPress, KeyUp, TypeText

_VK: dict[str, str] = {
    "enter": "VK_RETURN", "tab": "VK_TAB", "escape": "VK_ESCAPE", "backspace": "VK_BACK",
    "delete": "VK_DELETE", "insert": "VK_INSERT", "home": "VK_HOME", "end": "VK_END", "left": "VK_LEFT",
    "right": "VK_RIGHT", "up": "VK_UP", "down": "VK_DOWN", "page_up": "VK_PRIOR", "page_down": "VK_NEXT",
    "space": "VK_SPACE", "caps_lock": "VK_CAPITAL", "print": "VK_SNAPSHOT", "apps": "VK_APPS",
    "pause": "VK_PAUSE", "ctrl": "VK_CONTROL", "shift": "VK_SHIFT", "alt": "VK_MENU", "super": "VK_LWIN",
}  # fmt: skip


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


def send_ops(auto: Any, ops: list[KeyOp], cancelled: Callable[[], bool]) -> None:
    """Press the keys and type the text of ``ops`` in order; stops early once ``cancelled()``."""
    keys = auto.Keys
    for op in ops:
        if cancelled():
            return  # the caller gave up: send no more keys
        if isinstance(op, TypeText):
            auto.SendKeys(escape_send_keys(op.text), interval=0.01)
        elif isinstance(op, KeyDown):
            auto.PressKey(getattr(keys, vk_name(op.key)))
        elif isinstance(op, KeyUp):
            auto.ReleaseKey(getattr(keys, vk_name(op.key)))
        elif isinstance(op, KeyPress):
            mods = [getattr(keys, vk_name(m)) for m in op.modifiers]
            for mod in mods:
                auto.PressKey(mod)
            key = getattr(keys, vk_name(op.key))
            auto.PressKey(key)
            auto.ReleaseKey(key)
            for mod in reversed(mods):
                auto.ReleaseKey(mod)
