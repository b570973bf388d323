"""What the phone does with taps, swipes, text, keys and app launches (pure changes of the state)."""

from __future__ import annotations

import re
from typing import Any

from .ui import APPS, HEIGHT, NOTE_ROW, NOTES_LIST_TOP, WIDTH, build, contains, hit

# The keys the simulator knows, by name and by number (`input keyevent 3` means HOME).
KEYCODES = (
    {
        "HOME": 3,
        "BACK": 4,
        "CALL": 5,
        "ENDCALL": 6,
        "VOLUME_UP": 24,
        "VOLUME_DOWN": 25,
        "POWER": 26,
        "CAMERA": 27,
        "TAB": 61,
        "SPACE": 62,
        "ENTER": 66,
        "DEL": 67,
        "MENU": 82,
        "SEARCH": 84,
        "ESCAPE": 111,
        "FORWARD_DEL": 112,
        "MOVE_HOME": 122,
        "MOVE_END": 123,
        "APP_SWITCH": 187,
        "WAKEUP": 224,
        "SLEEP": 223,
    }
    | {str(d): 7 + d for d in range(10)}
    | {chr(c): 29 + c - ord("A") for c in range(ord("A"), ord("Z") + 1)}
)
_BY_NUMBER = {number: name for name, number in KEYCODES.items()}


class DeviceError(ValueError):
    """A command the device refuses (the message is what the device prints)."""


def package_screen(package: str) -> str | None:
    """The screen an installed app opens on (None when the package has no launcher activity)."""
    return next((screen for _, pkg, screen, _ in APPS if pkg == package), None)


def _go(state: dict[str, Any], screen: str) -> None:
    if screen != state["screen"]:
        state["back_stack"].append(state["screen"])
        state["screen"] = screen
    state["focused"] = None


def launch(state: dict[str, Any], package: str) -> bool:
    """Open an app's launcher screen; False when no such app is installed."""
    screen = package_screen(package)
    if screen is None:
        return False
    _go(state, screen)
    return True


def tap(state: dict[str, Any], x: float, y: float) -> None:
    """A tap: whatever control's bounds contain the point reacts."""
    if not (0 <= x < WIDTH and 0 <= y < HEIGHT):
        return
    action = hit(build(state), x, y)
    verb, _, arg = action.partition(":")
    if verb == "launch":
        launch(state, arg)
    elif verb == "focus":
        state["focused"] = arg
    elif verb == "save":
        _save(state)
    elif verb == "delete":
        count = len(state["notes"])
        state["notes"], state["notes_scroll"] = [], 0
        state["status_message"] = f"Deleted {count} note{'s' if count != 1 else ''}"
    elif verb == "toggle":
        state["settings"][arg] = not state["settings"].get(arg)
    elif verb == "calc":
        _calculate(state, arg)


def _save(state: dict[str, Any]) -> None:
    text = state["note_text"]
    if not text.strip():
        state["status_message"] = "Nothing to save"
        return
    state["notes"].append(text)
    state["note_text"] = ""
    state["status_message"] = "Saved"


def swipe(state: dict[str, Any], x1: float, y1: float, x2: float, y2: float) -> None:
    """A swipe scrolls the notes list when it starts on it and moves vertically; otherwise nothing."""
    if state["screen"] != "notes" or abs(y2 - y1) <= abs(x2 - x1):
        return
    if not contains((0, NOTES_LIST_TOP, WIDTH, HEIGHT), x1, y1):
        return
    longest = max(0, len(state["notes"]) * NOTE_ROW - (HEIGHT - NOTES_LIST_TOP))
    state["notes_scroll"] = int(min(longest, max(0, state["notes_scroll"] + (y1 - y2))))


def type_text(state: dict[str, Any], text: str) -> None:
    """Text goes into the focused field; with no field focused the keystrokes are lost, as on a phone."""
    if state["focused"] == "note" and state["screen"] == "notes":
        state["note_text"] += text


def key_name(code: str) -> str:
    """The key's short name (HOME) from KEYCODE_HOME, HOME or 3; DeviceError for an unknown key."""
    name = code.upper().removeprefix("KEYCODE_")
    if name.isdigit() and int(name) in _BY_NUMBER:
        return _BY_NUMBER[int(name)]
    if name in KEYCODES:
        return name
    raise DeviceError(f"Error: Unknown keycode: {code}")


def press_key(state: dict[str, Any], code: str) -> None:
    """One key press (HOME, BACK, DEL, SPACE, letters, digits; the rest change nothing on screen)."""
    name = key_name(code)
    if name == "HOME":
        state["screen"], state["back_stack"], state["focused"] = "launcher", [], None
    elif name == "BACK":
        if state["back_stack"]:
            state["screen"] = state["back_stack"].pop()
        state["focused"] = None
    elif name == "DEL":
        if state["focused"] == "note":
            state["note_text"] = state["note_text"][:-1]
    elif name == "SPACE":
        type_text(state, " ")
    elif len(name) == 1:
        type_text(state, name.lower())


def _calculate(state: dict[str, Any], key: str) -> None:
    display: str = state["calculator"]["display"]
    if key == "C":
        display = "0"
    elif key == "=":
        display = _evaluate(display)
    elif key.isdigit():
        display = key if display in ("0", "Error") else display + key
    elif display != "Error":
        display = (display[:-1] if display[-1] in "+-*/" else display) + key
    state["calculator"]["display"] = display


def _evaluate(expression: str) -> str:
    if expression.startswith("-"):
        expression = "0" + expression
    tokens = re.findall(r"\d+(?:\.\d+)?|[-+*/]", expression)
    if not tokens or tokens[0] in "+-*/":
        return "Error"
    if tokens[-1] in "+-*/":
        tokens.pop()
    terms = [float(tokens[0])]
    for op, number in zip(tokens[1::2], tokens[2::2], strict=False):
        value = float(number)
        if op == "*":
            terms[-1] *= value
        elif op == "/":
            if value == 0:
                return "Error"
            terms[-1] /= value
        else:
            terms.append(value if op == "+" else -value)
    total = sum(terms)
    return str(int(total)) if total == int(total) else f"{total:.10g}"
