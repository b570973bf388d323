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
    "-": "VK_OEM_MINUS", "=": "VK_OEM_PLUS", "+": "VK_OEM_PLUS", ",": "VK_OEM_COMMA", ".": "VK_OEM_PERIOD",
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
    """Press the keys and type the text of ``ops`` in order; stops early once ``cancelled()``.

    Every virtual key is resolved before anything is pressed, and whatever is still held when the
    keys stop (an error, a cancel between a key-down and its key-up) is released: a modifier left
    down would corrupt every later input on the real desktop.
    """
    keys = auto.Keys

    def vk(name: str) -> Any:
        return getattr(keys, vk_name(name))

    for op in ops:  # resolve first: an unknown key fails before any key goes down
        for name in (*op.modifiers, op.key) if isinstance(op, KeyPress) else (getattr(op, "key", None),):
            if name is not None:
                vk(name)
    held: list[Any] = []
    try:
        for op in ops:
            if cancelled():
                return  # the caller gave up: send no more keys
            if isinstance(op, TypeText):
                auto.SendKeys(escape_send_keys(op.text), interval=0.01)
            elif isinstance(op, KeyDown):
                auto.PressKey(vk(op.key))
                held.append(vk(op.key))
            elif isinstance(op, KeyUp):
                auto.ReleaseKey(vk(op.key))
                if vk(op.key) in held:
                    held.remove(vk(op.key))
            elif isinstance(op, KeyPress):
                for code in (*(vk(m) for m in op.modifiers), vk(op.key)):
                    auto.PressKey(code)
                    held.append(code)
                for code in reversed(held[-len(op.modifiers) - 1 :]):
                    auto.ReleaseKey(code)
                del held[-len(op.modifiers) - 1 :]
    finally:
        for code in reversed(held):
            auto.ReleaseKey(code)
