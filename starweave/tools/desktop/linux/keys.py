"""Render neutral key operations (see :mod:`starweave.tools.desktop.keys`) as xdotool commands."""

from __future__ import annotations

from starweave.tools.desktop.keys import KeyDown, KeyOp, KeyPress, KeyUp, TypeText, parse_keys

_KEYSYMS: dict[str, str] = {
    "enter": "Return", "tab": "Tab", "escape": "Escape", "backspace": "BackSpace", "delete": "Delete",
    "insert": "Insert", "home": "Home", "end": "End", "left": "Left", "right": "Right", "up": "Up",
    "down": "Down", "page_up": "Prior", "page_down": "Next", "space": "space", "caps_lock": "Caps_Lock",
    "print": "Print", "apps": "Menu", "pause": "Pause",
    "ctrl": "ctrl", "shift": "shift", "alt": "alt", "super": "super",
}  # fmt: skip
for _n in range(1, 25):
    _KEYSYMS[f"f{_n}"] = f"F{_n}"

# Characters that are not their own X keysym name.
_CHAR_KEYSYMS: dict[str, str] = {
    "+": "plus", "-": "minus", "=": "equal", ",": "comma", ".": "period", "/": "slash", "\\": "backslash",
    ";": "semicolon", "'": "apostrophe", "`": "grave", "[": "bracketleft", "]": "bracketright",
    "*": "asterisk", "!": "exclam", "@": "at", "#": "numbersign", "$": "dollar", "%": "percent",
    "^": "asciicircum", "&": "ampersand", "(": "parenleft", ")": "parenright", "_": "underscore",
    "{": "braceleft", "}": "braceright", "|": "bar", ":": "colon", '"': "quotedbl", "<": "less",
    ">": "greater", "?": "question", "~": "asciitilde", " ": "space",
}  # fmt: skip

TYPE_DELAY_MS = 5


def keysym(key: str) -> str:
    """The X keysym name xdotool understands for a neutral key name or one character."""
    if key in _KEYSYMS:
        return _KEYSYMS[key]
    return _CHAR_KEYSYMS.get(key, key)


def to_xdotool(ops: list[KeyOp]) -> list[list[str]]:
    """One xdotool argument list per operation (run in order; each is prefixed with ``xdotool``)."""
    commands: list[list[str]] = []
    for op in ops:
        if isinstance(op, TypeText):
            commands.append(["type", "--delay", str(TYPE_DELAY_MS), "--", op.text])
        elif isinstance(op, KeyPress):
            combo = "+".join([keysym(m) for m in op.modifiers] + [keysym(op.key)])
            commands.append(["key", "--clearmodifiers", combo])
        elif isinstance(op, KeyDown):
            commands.append(["keydown", keysym(op.key)])
        elif isinstance(op, KeyUp):
            commands.append(["keyup", keysym(op.key)])
    return commands


def translate_keys(keys: str) -> list[list[str]]:
    """pywinauto key syntax straight to xdotool argument lists."""
    return to_xdotool(parse_keys(keys))
