"""Reading ``uiautomation`` elements: control types, boxes, values, dialogs, and the walk adapter.

Plain functions over duck-typed elements, so the fake tree of the unit tests reads the same way.
"""

from __future__ import annotations

import time
from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.model import ControlInfo, Rect

LISTED_TYPES = {
    "Button", "Edit", "TabItem", "Document", "ListItem", "MenuItem", "ScrollBar", "TreeItem", "Hyperlink",
    "ComboBox", "RadioButton", "Spinner", "CheckBox", "Group", "Text", "DataItem", "Slider",
}  # fmt: skip
# The window class of Win32 dialog boxes (message boxes, the common Open/Save As dialogs).
DIALOG_CLASS = "#32770"


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
    """The element's bounding box in screen coordinates."""
    box = element.BoundingRectangle
    return Rect(x=box.left, y=box.top, width=box.right - box.left, height=box.bottom - box.top)


def element_value(element: Any, errors: tuple[type[BaseException], ...]) -> str:
    """The ValuePattern's value, or "" when the element has none."""
    try:
        return str(element.GetValuePattern().Value or "")
    except (*errors, AttributeError):  # type: ignore[misc]
        return ""


def is_dialog(element: Any, errors: tuple[type[BaseException], ...]) -> bool:
    """A dialog-type top-level window: a Win32 dialog box, or any window shown modally (the
    counterpart of the "dialog"/"file chooser"/"alert" roles the Linux backend merges)."""
    try:
        if str(element.ClassName or "") == DIALOG_CLASS:
            return True
        return bool(element.GetWindowPattern().IsModal)
    except (*errors, AttributeError):  # type: ignore[misc]
        return False  # no WindowPattern: not a window we can tell is a dialog


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
            value=element_value(node, self.errors),
            depth=depth,
            source="uia",
        )
