"""AT-SPI side of the Linux backend, through ``gi.repository.Atspi`` (imported lazily).

Every function blocks (each property read is a D-Bus round trip); the backend runs them on its one
worker thread so AT-SPI is never used from two threads at once.

GTK4 (4.8) reports extents relative to its window, including (0, 0) for the frame; the screen position
is the X window origin plus the client-side-decoration shadow margin ((X size - a11y size) / 2) plus
the window-relative extents. GTK3 reports screen coordinates.
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.model import ControlInfo, Rect

_INSTALL_HINT = (
    "AT-SPI is not available in this Python: install the system packages "
    "(`apt-get install at-spi2-core gir1.2-atspi-2.0 libgirepository1.0-dev libcairo2-dev pkg-config gcc`, "
    "or `make system-deps`) and then `pip install 'starweave[desktop]'` (PyGObject<3.51 on Debian 12)."
)

TOPLEVEL_ROLES = {"frame", "window", "dialog", "file chooser", "alert", "color chooser", "font chooser"}

_ROLE_TYPES: dict[str, str] = {
    "push button": "Button", "toggle button": "Button", "button": "Button",
    "check box": "CheckBox", "radio button": "RadioButton",
    "menu item": "MenuItem", "check menu item": "MenuItem", "radio menu item": "MenuItem",
    "tearoff menu item": "MenuItem", "menu": "MenuItem", "menu bar": "MenuBar",
    "text": "Edit", "entry": "Edit", "password text": "Edit", "editbar": "Edit", "terminal": "Edit",
    "label": "Text", "static": "Text", "heading": "Text", "caption": "Text",
    "combo box": "ComboBox", "list": "List", "list box": "List", "list item": "ListItem",
    "table cell": "DataItem", "tree item": "TreeItem", "tree": "Tree", "tree table": "Tree",
    "table": "Table", "page tab": "TabItem", "page tab list": "Tab", "scroll bar": "ScrollBar",
    "slider": "Slider", "spin button": "Spinner", "link": "Hyperlink", "tool bar": "ToolBar",
    "image": "Image", "icon": "Image", "document frame": "Document", "document text": "Document",
    "document web": "Document", "header": "Header", "column header": "HeaderItem",
    "row header": "HeaderItem", "status bar": "StatusBar", "progress bar": "ProgressBar",
    "frame": "Window", "window": "Window", "dialog": "Window", "file chooser": "Window",
    "alert": "Window", "panel": "Pane", "filler": "Pane", "scroll pane": "Pane", "split pane": "Pane",
    "viewport": "Pane", "grouping": "Group", "separator": "Separator", "tool tip": "ToolTip",
    "notification": "Text", "info bar": "Pane",
}  # fmt: skip

# Control types listed by a walk (the reference's default CONTROL_LIST plus menus and lists);
# anything else is listed only when it offers an action.
LISTED_TYPES = {
    "Button", "Edit", "TabItem", "Document", "ListItem", "MenuItem", "ScrollBar", "TreeItem",
    "Hyperlink", "ComboBox", "RadioButton", "Spinner", "CheckBox", "Text", "DataItem", "Slider",
}  # fmt: skip
_VALUE_CHARS = 200


@functools.cache
def load_atspi() -> tuple[Any, Any]:
    """``(Atspi, GLib)`` modules; raises :class:`DesktopError` naming what to install."""
    try:
        import gi

        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi, GLib
    except (ImportError, ValueError) as exc:
        raise DesktopError(f"{_INSTALL_HINT} ({exc})") from exc
    Atspi.init()
    return Atspi, GLib


def errors() -> tuple[type[BaseException], ...]:
    """Exceptions a broken or vanished accessible may raise."""
    _, glib = load_atspi()
    return (glib.Error, RuntimeError)


def control_type(role: str, editable: bool) -> str:
    """UIA-style control type for an AT-SPI role name."""
    if role in {"text", "entry", "terminal"} and not editable:
        return "Text"
    return _ROLE_TYPES.get(role, role.title().replace(" ", ""))


def clean_name(name: str, gtk4: bool) -> str:
    """GTK4 doubles button labels ('2 2', '= ='); keep one half."""
    if gtk4:
        half, sep, rest = name.partition(" ")
        if sep and half == rest:
            return half
    return name


@dataclass
class A11yWindow:
    """One top-level AT-SPI window with what is needed to turn its extents into screen pixels."""

    accessible: Any
    app_name: str
    pid: int
    gtk4: bool
    role: str
    name: str
    xid: int = 0
    x_rect: Rect | None = None
    states: set[str] = field(default_factory=set)

    @property
    def offset(self) -> tuple[int, int]:
        """Add this to window-relative extents (GTK4) to get screen coordinates."""
        if not self.gtk4 or self.x_rect is None:
            return 0, 0
        ext = self.accessible.get_extents(load_atspi()[0].CoordType.WINDOW)
        dx = max(0, (self.x_rect.width - ext.width) // 2)
        dy = max(0, (self.x_rect.height - ext.height) // 2)
        return self.x_rect.x + dx, self.x_rect.y + dy

    def rect(self) -> Rect:
        """The window's screen rectangle (the visible frame, without GTK4's shadow margin)."""
        atspi, _ = load_atspi()
        if self.gtk4:
            ext = self.accessible.get_extents(atspi.CoordType.WINDOW)
            ox, oy = self.offset
            return Rect(x=ox + ext.x, y=oy + ext.y, width=ext.width, height=ext.height)
        if self.x_rect is not None:
            return self.x_rect
        ext = self.accessible.get_extents(atspi.CoordType.SCREEN)
        return Rect(x=ext.x, y=ext.y, width=ext.width, height=ext.height)


def children(node: Any, max_count: int | None = None, deadline: float | None = None) -> list[Any]:
    """Children of an accessible; missing ones (None) are dropped. Each child is one D-Bus round trip,
    so at most ``max_count`` are read, and reading stops once ``time.monotonic()`` passes ``deadline``."""
    count = node.get_child_count()
    if max_count is not None:
        count = min(count, max(0, max_count))
    kids = []
    for i in range(count):
        if deadline is not None and time.monotonic() > deadline:
            break
        kid = node.get_child_at_index(i)
        if kid is not None:
            kids.append(kid)
    return kids


def applications() -> list[Any]:
    """Applications on the AT-SPI desktop, with fresh (uncached) properties."""
    atspi, _ = load_atspi()
    apps = children(atspi.get_desktop(0))
    for app in apps:
        app.clear_cache()
    return apps


def states(node: Any) -> set[str]:
    return {s.value_nick for s in node.get_state_set().get_states()}


def toplevels(app: Any) -> list[A11yWindow]:
    """The application's visible top-level windows (X windows not yet matched)."""
    pid = app.get_process_id()
    toolkit = (app.get_toolkit_name() or "").lower()
    gtk4 = toolkit == "gtk" and (app.get_toolkit_version() or "").startswith("4")
    found = []
    for top in children(app):
        role = top.get_role_name()
        st = states(top)
        if role not in TOPLEVEL_ROLES or "visible" not in st or (not gtk4 and "showing" not in st):
            continue
        found.append(
            A11yWindow(
                accessible=top, app_name=app.get_name() or "", pid=pid, gtk4=gtk4, role=role,
                name=top.get_name() or "", states=st,
            )
        )  # fmt: skip
    return found


class ControlReader:
    """The walk's :class:`~starweave.tools.desktop.walk.NodeAdapter` for one window."""

    def __init__(self, window: A11yWindow, visible_only: bool = True) -> None:
        atspi, _ = load_atspi()
        self.errors = errors()
        self.window = window
        self.visible_only = visible_only
        self.coord = atspi.CoordType.WINDOW if window.gtk4 else atspi.CoordType.SCREEN
        self.offset = window.offset

    def children(self, node: Any, max_count: int, deadline: float) -> list[Any]:
        return children(node, max_count, deadline)

    def rect(self, node: Any) -> Rect:
        ext = node.get_extents(self.coord)
        return Rect(x=ext.x + self.offset[0], y=ext.y + self.offset[1], width=ext.width, height=ext.height)

    def describe(self, node: Any, depth: int) -> ControlInfo | None:
        role = node.get_role_name()
        st = states(node)
        visible = "visible" in st and (self.window.gtk4 or "showing" in st)
        if self.visible_only and not visible:
            return None
        ifaces = set(node.get_interfaces())
        actions = action_names(node) if "Action" in ifaces else []
        ctype = control_type(role, "editable" in st)
        if ctype not in LISTED_TYPES and not actions:
            return None
        rect = self.rect(node)
        if self.visible_only and rect.is_empty():
            return None
        if ctype == "Text" and role == "label" and _parent_is_button(node):
            return None  # the button itself is listed, with this label as its name
        return ControlInfo(
            id="",
            name=control_name(node, self.window.gtk4),
            control_type=ctype,
            rect=rect,
            is_enabled="sensitive" in st or "enabled" in st,
            is_visible=visible,
            automation_id=_automation_id(node),
            actions=actions,
            value=text_of(node, ifaces, _VALUE_CHARS) if "Text" in ifaces else "",
            depth=depth,
        )

    def label(self, node: Any) -> dict[str, Any]:
        """Properties of one node for the UI tree."""
        st = states(node)
        role = node.get_role_name()
        return {
            "name": clean_name(node.get_name() or "", self.window.gtk4),
            "control_type": control_type(role, "editable" in st),
            "role": role,
            "rect": self.rect(node),
        }


_BUTTON_ROLES = {"push button", "toggle button", "check box", "radio button", "link", "menu item"}


def _parent_is_button(node: Any) -> bool:
    parent = node.get_parent()
    return parent is not None and parent.get_role_name() in _BUTTON_ROLES


def control_name(node: Any, gtk4: bool) -> str:
    """The accessible name; GTK4 widgets named after their class ('GtkButton') take their label's."""
    name = clean_name(node.get_name() or "", gtk4)
    if not (gtk4 and name.startswith("Gtk") and name[3:4].isupper()):
        return name
    for kid in children(node, 3):
        if kid.get_role_name() == "label" and kid.get_name():
            return str(kid.get_name())
    return ""


def action_names(node: Any) -> list[str]:
    # PyGObject flags Atspi's action-name getter as deprecated though it is the current API.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [node.get_action_name(i) for i in range(node.get_n_actions())]


def text_of(node: Any, ifaces: set[str] | None = None, limit: int = -1) -> str:
    """The node's text (Text interface), else its value, else its name."""
    ifaces = ifaces if ifaces is not None else set(node.get_interfaces())
    if "Text" in ifaces:
        count = node.get_character_count()
        end = count if limit < 0 else min(count, limit)
        return str(node.get_text(0, end) or "")
    if "Value" in ifaces:
        return str(node.get_current_value())
    return str(node.get_name() or "")


def do_action(node: Any, preferred: tuple[str, ...] = ("click", "press", "activate", "toggle")) -> str:
    """Run the node's preferred action (the first one otherwise); returns its name."""
    names = action_names(node) if "Action" in node.get_interfaces() else []
    if not names:
        raise DesktopError("This control has no accessible action and no on-screen position to click.")
    index = next((names.index(p) for p in preferred if p in names), 0)
    node.do_action(index)
    return names[index]


def set_text(node: Any, text: str, clear: bool) -> bool:
    """Set or insert text through EditableText; False when the node is not editable."""
    ifaces = set(node.get_interfaces())
    if "EditableText" not in ifaces or "editable" not in states(node):
        return False
    if clear:
        node.set_text_contents(text)
    else:
        pos = node.get_caret_offset() if "Text" in ifaces else -1
        if pos < 0:
            pos = node.get_character_count()
        node.insert_text(pos, text, len(text.encode("utf-8")))
    return True


def grab_focus(node: Any) -> bool:
    """Focus the node; False when it cannot take focus (the caller then clicks it instead).

    GTK4 answers grab_focus on some nodes (gnome-calculator's display) with an AT-SPI error
    rather than False.
    """
    if "Component" not in node.get_interfaces():
        return False
    try:
        return bool(node.grab_focus())
    except errors():
        return False


def _automation_id(node: Any) -> str:
    try:
        return str(node.get_accessible_id() or "")
    except AttributeError:  # libatspi older than 2.34 has no accessible ids
        return ""
