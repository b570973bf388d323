"""The uiautomator XML of a screen -> the numbered controls the MobileAgent sees (spec C §13.9).

Control filter: keep nodes that are clickable, long-clickable, checkable or scrollable, or have text
or content-desc, or whose class is an Edit*/Button* widget; drop rectangles with r<=l, b<=t, or r or b
equal to 0 (off screen or not laid out). Ids are "1", "2"... in document order of the kept nodes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from starweave.tools.mobile.adb import AdbError

BOUNDS_RE = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")
FLAG_ATTRIBUTES = ("clickable", "long-clickable", "checkable", "scrollable")
CONTROL_SOURCE = "uiautomator"
# Labels of controls whose action cannot be taken back: the agent asks for CONFIRM before them.
DANGER_WORDS = (
    "send",
    "delete",
    "remove",
    "erase",
    "pay",
    "payment",
    "purchase",
    "buy",
    "checkout",
    "transfer",
    "install",
    "uninstall",
    "factory reset",
    "format",
)
_DANGER_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in DANGER_WORDS) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class MobileControl:
    """One control of the screen: ``rect`` is ``[left, top, right, bottom]`` in screen pixels."""

    id: str
    name: str
    type: str
    rect: tuple[int, int, int, int]
    class_name: str = ""
    resource_id: str = ""
    package: str = ""
    enabled: bool = True

    @property
    def center(self) -> tuple[int, int]:
        """The centre of the rectangle (where a tap lands)."""
        left, top, right, bottom = self.rect
        return (left + right) // 2, (top + bottom) // 2

    def target_info(self) -> dict[str, Any]:
        """The control as TargetInfo (kind ``control``); ``dangerous`` names the word when it is one."""
        info: dict[str, Any] = {
            "kind": "control",
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "rect": list(self.rect),
            "source": CONTROL_SOURCE,
        }
        word = danger_word(self.name)
        if word:
            info["dangerous"] = word
        return info


def danger_word(label: str) -> str | None:
    """The irreversible-action word in ``label`` (send, delete, pay, install...), lower-case, or None."""
    match = _DANGER_RE.search(label or "")
    return match.group(1).lower() if match else None


def parse_bounds(bounds: str) -> tuple[int, int, int, int] | None:
    """``"[l,t][r,b]"`` -> ``(l, t, r, b)``; None when malformed."""
    match = BOUNDS_RE.match((bounds or "").strip())
    if not match:
        return None
    left, top, right, bottom = (int(v) for v in match.groups())
    return left, top, right, bottom


def _kept(node: ET.Element, rect: tuple[int, int, int, int] | None) -> bool:
    if rect is None:
        return False
    left, top, right, bottom = rect
    if right <= left or bottom <= top or right == 0 or bottom == 0:
        return False
    short = node.get("class", "").rsplit(".", 1)[-1]
    return (
        any(node.get(flag) == "true" for flag in FLAG_ATTRIBUTES)
        or bool(node.get("text") or node.get("content-desc"))
        or short.startswith(("Edit", "Button"))
    )


def parse_controls(xml: str) -> list[MobileControl]:
    """The filtered, numbered controls of a uiautomator dump; AdbError when the XML is unreadable."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise AdbError(f"the UI dump is not valid XML ({exc})") from None
    controls: list[MobileControl] = []
    for node in root.iter("node"):
        rect = parse_bounds(node.get("bounds", ""))
        if not _kept(node, rect):
            continue
        assert rect is not None  # _kept refuses a missing rectangle
        class_name = node.get("class", "")
        controls.append(
            MobileControl(
                id=str(len(controls) + 1),
                name=node.get("text") or node.get("content-desc") or "",
                type=class_name.rsplit(".", 1)[-1],
                rect=rect,
                class_name=class_name,
                resource_id=node.get("resource-id", ""),
                package=node.get("package", ""),
                enabled=node.get("enabled", "true") != "false",
            )
        )
    return controls


def action_risk(tool_name: str, arguments: dict[str, Any], controls: list[dict[str, Any]]) -> str | None:
    """Why the MobileExecutor action ``tool_name(**arguments)`` needs CONFIRM, or None.

    ``controls`` is the last ``get_app_window_controls_target_info`` list. ``click_control`` is risky
    when its control (by id) or the name the model gave is labelled with a danger word; ``tap`` when
    the point falls inside such a control. Other tools type, scroll or navigate, which can be undone.
    """
    if tool_name == "click_control":
        by_id = {str(c.get("id")): c for c in controls}
        control = by_id.get(str(arguments.get("control_id", "")), {})
        for label in (str(control.get("name", "")), str(arguments.get("control_name", ""))):
            word = danger_word(label)
            if word:
                return f"tapping '{label}' may {word} something that cannot be taken back"
        return None
    if tool_name == "tap":
        try:
            # Any number the tool would accept (540, 540.0, "540"): the check must not be narrower.
            x, y = float(arguments.get("x")), float(arguments.get("y"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        for control in controls:
            left, top, right, bottom = control.get("rect") or (0, 0, 0, 0)
            word = danger_word(str(control.get("name", "")))
            if word and left <= x < right and top <= y < bottom:
                return f"the tap lands on '{control.get('name')}', which may {word} something"
    return None
