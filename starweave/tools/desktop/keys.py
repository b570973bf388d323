"""Parse pywinauto key syntax into neutral key operations that each backend renders.

Supported: plain text (spaces kept, "\\n" is Enter), ``{NAME}`` and ``{NAME n}`` (repeat), ``{VK_*}``
codes, ``{NAME down}`` / ``{NAME up}``, the prefix modifiers ``^`` (ctrl) ``+`` (shift) ``%`` (alt) on
the next key or a ``(group)``, ``~`` (Enter) and escapes like ``{+}`` ``{{}``. A bare modifier such as
``{VK_CONTROL}`` holds for the next key, so ``"{VK_CONTROL}s"`` is ctrl+s (the reference's usage).
"""

from __future__ import annotations

from dataclasses import dataclass

from starweave.errors import DesktopError

MODIFIERS = ("ctrl", "shift", "alt", "super")
# Bounds of one call: every key operation is one input event (one xdotool run on Linux).
MAX_REPEAT = 100
MAX_KEY_OPS = 500
_PREFIX = {"^": "ctrl", "+": "shift", "%": "alt"}

# pywinauto / VK names -> neutral key names.
_NAMES: dict[str, str] = {
    "ENTER": "enter", "VK_RETURN": "enter", "RETURN": "enter",
    "TAB": "tab", "VK_TAB": "tab",
    "ESC": "escape", "ESCAPE": "escape", "VK_ESCAPE": "escape",
    "BACKSPACE": "backspace", "BS": "backspace", "BKSP": "backspace", "VK_BACK": "backspace",
    "DELETE": "delete", "DEL": "delete", "VK_DELETE": "delete",
    "INSERT": "insert", "INS": "insert", "VK_INSERT": "insert",
    "HOME": "home", "VK_HOME": "home", "END": "end", "VK_END": "end",
    "LEFT": "left", "VK_LEFT": "left", "RIGHT": "right", "VK_RIGHT": "right",
    "UP": "up", "VK_UP": "up", "DOWN": "down", "VK_DOWN": "down",
    "PGUP": "page_up", "VK_PRIOR": "page_up", "PGDN": "page_down", "VK_NEXT": "page_down",
    "SPACE": "space", "VK_SPACE": "space",
    "CAPSLOCK": "caps_lock", "VK_CAPITAL": "caps_lock",
    "PRTSC": "print", "VK_SNAPSHOT": "print", "APPS": "apps", "VK_APPS": "apps",
    "BREAK": "pause", "VK_PAUSE": "pause",
    "VK_CONTROL": "ctrl", "VK_LCONTROL": "ctrl", "VK_RCONTROL": "ctrl", "CTRL": "ctrl",
    "VK_SHIFT": "shift", "VK_LSHIFT": "shift", "VK_RSHIFT": "shift", "SHIFT": "shift",
    "VK_MENU": "alt", "VK_LMENU": "alt", "VK_RMENU": "alt", "ALT": "alt",
    "VK_LWIN": "super", "VK_RWIN": "super", "LWIN": "super", "RWIN": "super", "WIN": "super",
}  # fmt: skip
for _n in range(1, 25):
    _NAMES[f"F{_n}"] = _NAMES[f"VK_F{_n}"] = f"f{_n}"


@dataclass(frozen=True)
class KeyPress:
    """Press and release ``key`` (a neutral name or one character) with ``modifiers`` held."""

    key: str
    modifiers: tuple[str, ...] = ()


@dataclass(frozen=True)
class TypeText:
    """Type literal text (no newlines; those are Enter presses)."""

    text: str


@dataclass(frozen=True)
class KeyDown:
    key: str


@dataclass(frozen=True)
class KeyUp:
    key: str


KeyOp = KeyPress | TypeText | KeyDown | KeyUp


def parse_keys(keys: str) -> list[KeyOp]:
    """Parse ``keys`` (pywinauto syntax); raises :class:`DesktopError` naming the bad part, a repeat
    count over :data:`MAX_REPEAT` or more than :data:`MAX_KEY_OPS` operations."""
    return _check_size(_Parser(keys).parse(), keys)


def text_ops(text: str) -> list[KeyOp]:
    """Literal ``text`` as key operations, never read as key syntax: newlines are Enter presses and
    everything else (``%``, ``~``, ``{``, ``^`` ...) is typed as itself."""
    ops: list[KeyOp] = []
    for i, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n")):
        if i:
            ops.append(KeyPress("enter"))
        if line:
            ops.append(TypeText(line))
    return _check_size(ops, text)


def _check_size(ops: list[KeyOp], keys: str) -> list[KeyOp]:
    if len(ops) > MAX_KEY_OPS:
        raise DesktopError(
            f"Too many key operations ({len(ops)}) in {keys[:60]!r}...: at most {MAX_KEY_OPS} per call; "
            "split the input into several calls."
        )
    return ops


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.ops: list[KeyOp] = []

    def parse(self) -> list[KeyOp]:
        held: list[str] = []
        while self.pos < len(self.text):
            self._step(held)
        return _merge_text(self.ops)

    def _step(self, held: list[str]) -> None:
        ch = self.text[self.pos]
        if ch in _PREFIX:
            self.pos += 1
            held.append(_PREFIX[ch])
            return
        if ch == "(" and held:
            mods = tuple(held)
            held.clear()
            end = self.text.find(")", self.pos)
            if end < 0:
                raise DesktopError(f"Unclosed '(' in keys {self.text!r}: close the modifier group with ')'.")
            for sub in _Parser(self.text[self.pos + 1 : end]).parse():
                self.ops.extend(_with_mods(sub, mods))
            self.pos = end + 1
            return
        if ch == "{":
            self._brace(held)
            return
        self.pos += 1
        key = "enter" if ch in "~\n" else ch
        if key == "\r":
            return
        self._emit(key, held)

    def _brace(self, held: list[str]) -> None:
        # "{}}" and "{{}" are escapes: the closing brace is searched after the first character.
        end = self.text.find("}", self.pos + 2)
        if end < 0:
            raise DesktopError(
                f"Unclosed '{{' in keys {self.text!r}: write keys like {{ENTER}} or {{TAB 2}}."
            )
        body = self.text[self.pos + 1 : end]
        self.pos = end + 1
        if len(body) == 1:
            self._emit(body, held)
            return
        name, _, arg = body.partition(" ")
        key = _NAMES.get(name.upper())
        if key is None:
            if len(name) == 1:
                key = name
            else:
                raise DesktopError(
                    f"Unknown key {{{name}}} in {self.text!r}; use names like ENTER, TAB, VK_CONTROL, F5."
                )
        arg = arg.strip().lower()
        if arg == "down":
            self.ops.append(KeyDown(key))
        elif arg == "up":
            self.ops.append(KeyUp(key))
        elif key in MODIFIERS and not arg:
            held.append(key)
        else:
            count = _count(arg, self.text)
            for i in range(count):
                # Modifiers apply to every repeat; the last one clears them.
                self._emit(key, held if i == count - 1 else list(held))

    def _emit(self, key: str, held: list[str]) -> None:
        mods = tuple(dict.fromkeys(held))
        held.clear()
        if not mods and len(key) == 1 and key != " ":
            self.ops.append(TypeText(key))
        elif not mods and key == " ":
            self.ops.append(TypeText(" "))
        else:
            self.ops.append(KeyPress(key, mods))


def _count(arg: str, text: str) -> int:
    if not arg:
        return 1
    if not arg.isdigit():
        raise DesktopError(f"Bad repeat count {arg!r} in {text!r}; write {{TAB 2}}.")
    count = int(arg)
    if count > MAX_REPEAT:
        raise DesktopError(
            f"Repeat count {count} in {text[:60]!r} is over the limit of {MAX_REPEAT}; "
            "use a smaller count or another way to move (e.g. {PGDN}, ^{END})."
        )
    return count


def _with_mods(op: KeyOp, mods: tuple[str, ...]) -> list[KeyOp]:
    if isinstance(op, TypeText):
        return [KeyPress(c, mods) for c in op.text]
    if isinstance(op, KeyPress):
        return [KeyPress(op.key, tuple(dict.fromkeys(mods + op.modifiers)))]
    return [op]


def _merge_text(ops: list[KeyOp]) -> list[KeyOp]:
    merged: list[KeyOp] = []
    for op in ops:
        if isinstance(op, TypeText) and merged and isinstance(merged[-1], TypeText):
            merged[-1] = TypeText(merged[-1].text + op.text)
        else:
            merged.append(op)
    return merged
