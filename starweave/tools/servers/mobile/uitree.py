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
# "allow"/"grant" are a permission dialog's buttons (a refusal such as "Don't allow" is not one).
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
    "allow",
    "grant",
)
_DANGER_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in DANGER_WORDS) + r")\b", re.IGNORECASE)
_REFUSAL_RE = re.compile(r"^\s*(don'?t|do not|deny|never)\b", re.IGNORECASE)
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


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
    description: str = ""

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
        word = control_danger({"name": self.name, "type": self.type}, self.description, self.resource_id)
        if word:
            info["dangerous"] = word
        return info


def danger_word(label: str) -> str | None:
    """The irreversible-action word in ``label`` (send, delete, pay, install...), lower-case, or None."""
    match = _DANGER_RE.search(label or "")
    if match is None or (match.group(1).lower() in ("allow", "grant") and _REFUSAL_RE.match(label)):
        return None
    return match.group(1).lower()


def id_words(resource_id: str) -> str:
    """The words of a resource id: ``com.chat:id/sendButton`` -> ``"send Button"`` (icons often
    have no text, only an id such as ``…:id/send`` or ``…:id/delete_icon``)."""
    name = (resource_id or "").rpartition("/")[2]
    return _CAMEL_RE.sub(" ", name).replace("_", " ").replace("-", " ")


def control_danger(control: dict[str, Any], description: str = "", resource_id: str = "") -> str | None:
    """The danger word of a control (its ``dangerous`` flag, name, content-desc, resource id), or None.

    A text field's name is what was typed into it ("buy milk"), not a label, so it does not count.
    """
    flagged = control.get("dangerous")
    if flagged:
        return str(flagged)
    is_field = str(control.get("type", "")).startswith(("Edit", "AutoComplete"))
    labels = ([] if is_field else [str(control.get("name") or "")]) + [description, id_words(resource_id)]
    return next((w for w in map(danger_word, labels) if w), None)


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
                description=node.get("content-desc", ""),
            )
        )
    return controls
