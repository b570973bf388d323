"""Which MobileExecutor actions need the user's CONFIRM, judged on the last control list (spec C §13.9).

Every action that touches the screen is turned into the point(s) it touches: ``tap`` its (x, y),
``click_control`` and ``type_text`` the centre of their control (where the server taps), ``swipe``
points along its path. The action is risky when

* a control whose label (text, content-desc, resource-id words, or the ``dangerous`` flag the
  collector set) holds a danger word (send, delete, pay, install, allow...) contains a point;
* the clicked control, or the innermost control under a tap, holds such a control: a clickable
  row with no name of its own around a ``TextView "Delete"`` deletes when tapped anywhere;
* the clicked control says OK / Confirm / Yes while the screen names a danger (a dialog
  "Delete 3 notes?");
* there is no control list, so nothing tells what the tap or swipe lands on: the user decides
  (refusing outright would leave a screen without accessibility nodes unusable even with --yes).

``press_key KEYCODE_ENTER`` is risky when the screen has a send-like control or a chat-like field
(ENTER sends in most messengers), or when there is no control list; the notes app's Save/Delete
screen does not ask. ``launch_app`` is risky for stores, installers, wallets and payment apps:
the words below matched inside the package's segments (``com.android.packageinstaller``).
Typing alone never asks: text in a field can be deleted again; sending it is what the rules gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starweave.tools.servers.mobile.uitree import control_danger, danger_word

#: Words inside a package name's segments that make launching it need CONFIRM.
PACKAGE_DANGER = ("install", "vending", "store", "market", "wallet", "pay", "bank", "purchase", "checkout")
#: Labels of a dialog's accepting button (risky only when the screen names a danger).
CONFIRM_RE = re.compile(r"^\s*(ok|okay|confirm|yes|accept|continue|proceed)\b", re.IGNORECASE)
#: Controls that make ENTER a "send": a send button, a chat or reply field.
SEND_RE = re.compile(r"\b(send|post|reply|submit|comment|message|chat|compose)\b", re.IGNORECASE)
SWIPE_SAMPLES = 16
Rect = tuple[float, float, float, float]


@dataclass(frozen=True)
class Risk:
    """Why an action needs CONFIRM, and the control it is about (re-checked before it runs)."""

    reason: str
    target: dict[str, Any] | None = None


def rect_of(control: dict[str, Any]) -> Rect | None:
    """A control's ``[l, t, r, b]`` as floats, or None when it has none usable."""
    rect = control.get("rect")
    try:
        left, top, right, bottom = (float(v) for v in rect)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None
    return left, top, right, bottom


def contains(rect: Rect | None, x: float, y: float) -> bool:
    """Whether the point lies in the rect (left/top inclusive, right/bottom exclusive, as Android)."""
    return rect is not None and rect[0] <= x < rect[2] and rect[1] <= y < rect[3]


def _inside(inner: Rect | None, outer: Rect | None) -> bool:
    return (
        inner is not None
        and outer is not None
        and outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[2] <= outer[2]
        and inner[3] <= outer[3]
    )


def _area(control: dict[str, Any]) -> float:
    rect = rect_of(control) or (0.0, 0.0, 0.0, 0.0)
    return (rect[2] - rect[0]) * (rect[3] - rect[1])


def centre(control: dict[str, Any]) -> tuple[float, float] | None:
    """Where the server taps a control (integer centre of its rect), or None without a rect."""
    rect = rect_of(control)
    return None if rect is None else ((int(rect[0]) + int(rect[2])) // 2, (int(rect[1]) + int(rect[3])) // 2)


def innermost(controls: list[dict[str, Any]], x: float, y: float) -> dict[str, Any] | None:
    """The smallest control containing the point (the one a tap reaches), or None."""
    under = [c for c in controls if contains(rect_of(c), x, y)]
    return min(under, key=_area) if under else None


def _number(value: Any) -> float:
    return float(value)


def _points(tool: str, arguments: dict[str, Any]) -> list[tuple[float, float]]:
    """The points a tap or swipe touches; ValueError/TypeError when the arguments are no numbers."""
    if tool == "tap":
        return [(_number(arguments.get("x")), _number(arguments.get("y")))]
    x1, y1 = _number(arguments.get("start_x")), _number(arguments.get("start_y"))
    x2, y2 = _number(arguments.get("end_x")), _number(arguments.get("end_y"))
    steps = range(SWIPE_SAMPLES + 1)
    return [(x1 + (x2 - x1) * i / SWIPE_SAMPLES, y1 + (y2 - y1) * i / SWIPE_SAMPLES) for i in steps]


def _touch_risk(
    verb: str,
    points: list[tuple[float, float]],
    pressed: dict[str, Any] | None,
    controls: list[dict[str, Any]],
) -> Risk | None:
    for x, y in points:
        for control in controls:
            word = control_danger(control)
            if word and contains(rect_of(control), x, y):
                return Risk(
                    f"the {verb} lands on '{control.get('name') or word}', which may {word} something",
                    control,
                )
    if pressed is None:
        return None
    outer = rect_of(pressed)
    for control in controls:
        word = control_danger(control)
        if word and control is not pressed and _inside(rect_of(control), outer):
            label = control.get("name") or word
            return Risk(
                f"the {verb} presses a control holding '{label}', which may {word} something", pressed
            )
    if verb != "type text" and CONFIRM_RE.match(str(pressed.get("name") or "")):
        for control in controls:
            word = control_danger(control) or danger_word(str(control.get("name") or ""))
            if word:
                return Risk(
                    f"'{pressed.get('name')}' accepts a dialog that says '{control.get('name') or word}'",
                    pressed,
                )
    return None


def _key_risk(arguments: dict[str, Any], controls: list[dict[str, Any]]) -> Risk | None:
    key = str(arguments.get("key_code") or "").upper().removeprefix("KEYCODE_")
    if key not in ("ENTER", "66"):
        return None
    if not controls:
        return Risk("ENTER may send what was typed, and no control list shows what the screen is")
    for control in controls:
        # The collector's danger flag ("send") counts as a label: an id-only send icon has no name.
        label = " ".join(str(control.get(k) or "") for k in ("name", "dangerous"))
        if SEND_RE.search(label):
            return Risk(f"ENTER may send the text: the screen has '{control.get('name') or 'send'}'", None)
    return None


def app_risk(package: str) -> Risk | None:
    """Why launching ``package`` needs CONFIRM (a store, installer, wallet or payment app), or None."""
    for segment in package.lower().split(".")[1:]:
        word = next((w for w in PACKAGE_DANGER if w in segment), None)
        if word:
            return Risk(f"the app {package} ('{word}' in '{segment}') can install, buy or pay")
    return None


def assess(tool: str, arguments: dict[str, Any], controls: list[dict[str, Any]]) -> Risk | None:
    """Why ``tool(**arguments)`` on the screen of ``controls`` needs CONFIRM (see the module), or None."""
    if tool == "launch_app":
        return app_risk(str(arguments.get("package_name") or ""))
    if tool == "press_key":
        return _key_risk(arguments, controls)
    pressed: dict[str, Any] | None = None
    if tool in ("click_control", "type_text"):
        pressed = next((c for c in controls if str(c.get("id")) == str(arguments.get("control_id"))), None)
        given = str(arguments.get("control_name") or "")
        word = danger_word(given)
        if tool == "click_control" and word:
            return Risk(f"tapping '{given}' may {word} something that cannot be taken back", pressed)
        point = centre(pressed) if pressed is not None else None
        points = [point] if point is not None else []
    elif tool in ("tap", "swipe"):
        try:
            points = _points(tool, arguments)
        except (TypeError, ValueError):
            return Risk(
                f"the {tool}'s coordinates {arguments} are not numbers, so its target cannot be judged"
            )
        if not controls:
            return Risk(f"no control list: nothing shows what the {tool} lands on")
        pressed = innermost(controls, *points[0]) if tool == "tap" else None
    else:
        return None
    return _touch_risk(tool.replace("_", " "), points, pressed, controls)


def action_risk(tool_name: str, arguments: dict[str, Any], controls: list[dict[str, Any]]) -> str | None:
    """Why the MobileExecutor action ``tool_name(**arguments)`` needs CONFIRM, or None (:func:`assess`)."""
    risk = assess(tool_name, arguments, controls)
    return risk.reason if risk else None
