"""The screens as view trees: one tree feeds the uiautomator XML, the PNG and the tap hit test.

Because the XML bounds, the drawn rectangles and the hit test all come from the same ``Node``, a
tap at the centre of a control's ``bounds`` always lands on that control.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WIDTH, HEIGHT = 1080, 2400
STATUS_BAR = 80
NOTE_ROW = 160
NOTES_LIST_TOP = 800

LAUNCHER = "com.android.launcher3"
NOTES = "com.example.notes"
SETTINGS = "com.android.settings"
CALCULATOR = "com.example.calculator"
#: Not on the launcher (tests open it with ``update(screen="messages")``): the CONFIRM tests' screen.
MESSAGES = "com.example.messages"

# label, package, screen, icon colour: the launcher's icons, in order.
APPS: tuple[tuple[str, str, str, str], ...] = (
    ("Notes", NOTES, "notes", "#f4b400"),
    ("Settings", SETTINGS, "settings", "#607d8b"),
    ("Calculator", CALCULATOR, "calculator", "#1e88e5"),
)
SCREEN_PACKAGES = {"launcher": LAUNCHER, "messages": MESSAGES} | {screen: pkg for _, pkg, screen, _ in APPS}
SETTING_ROWS = (("wifi", "Wi-Fi"), ("bluetooth", "Bluetooth"), ("airplane", "Airplane mode"))
CALC_KEYS = ("7", "8", "9", "/", "4", "5", "6", "*", "1", "2", "3", "-", "C", "0", "=", "+")
CALC_KEY_IDS = {"/": "divide", "*": "multiply", "-": "minus", "+": "plus", "=": "equals", "C": "clear"}

Bounds = tuple[int, int, int, int]


@dataclass
class Node:
    """One view: the uiautomator attributes plus how to draw it (``style``) and what a tap does."""

    cls: str
    bounds: Bounds
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    clickable: bool = False
    checkable: bool = False
    checked: bool = False
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    hint: str = ""
    style: str = "container"
    colour: str = ""
    action: str = ""
    children: list[Node] = field(default_factory=list)

    def walk(self) -> list[Node]:
        """This node and all its descendants, parents first."""
        nodes = [self]
        for child in self.children:
            nodes.extend(child.walk())
        return nodes


def contains(bounds: Bounds, x: float, y: float) -> bool:
    """Whether the point lies inside the bounds (left/top inclusive, right/bottom exclusive)."""
    left, top, right, bottom = bounds
    return left <= x < right and top <= y < bottom


def hit(root: Node, x: float, y: float) -> str:
    """The action of the innermost tappable node under the point ('' when none)."""
    found = ""
    for node in root.walk():
        if node.action and contains(node.bounds, x, y):
            found = node.action
    return found


def _label(bounds: Bounds, text: str, resource_id: str, style: str) -> Node:
    """A TextView that only shows text."""
    return Node("android.widget.TextView", bounds, text=text, resource_id=resource_id, style=style)


def _tappable(cls: str, bounds: Bounds, action: str, style: str, **fields: Any) -> Node:
    """A clickable, focusable view; ``action`` is what a tap on it does."""
    return Node(cls, bounds, clickable=True, focusable=True, action=action, style=style, **fields)


def _title(package: str, text: str) -> Node:
    return _label((0, STATUS_BAR, WIDTH, 260), text, f"{package}:id/title", "title")


def _button(package: str, name: str, text: str, bounds: Bounds, action: str, colour: str = "#1a73e8") -> Node:
    return _tappable(
        "android.widget.Button",
        bounds,
        action,
        "button",
        text=text,
        resource_id=f"{package}:id/{name}",
        colour=colour,
    )


def _launcher(state: dict[str, Any]) -> list[Node]:
    icons = [
        _tappable(
            "android.widget.TextView",
            (60 + column * 345, 300, 330 + column * 345, 640),
            f"launch:{package}",
            "icon",
            text=label,
            content_desc=label,
            long_clickable=True,
            colour=colour,
        )
        for column, (label, package, _, colour) in enumerate(APPS)
    ]
    workspace = Node("android.widget.FrameLayout", (0, STATUS_BAR, WIDTH, HEIGHT), children=icons)
    workspace.resource_id = f"{LAUNCHER}:id/workspace"
    return [workspace]


def _notes(state: dict[str, Any]) -> list[Node]:
    field = _tappable(
        "android.widget.EditText",
        (60, 300, 1020, 460),
        "focus:note",
        "edit",
        text=state["note_text"],
        hint="Note",
        resource_id=f"{NOTES}:id/note_input",
        focused=state.get("focused") == "note",
        long_clickable=True,
    )
    nodes = [
        _title(NOTES, "Notes"),
        field,
        _button(NOTES, "save_button", "Save", (60, 500, 520, 640), "save"),
        _button(NOTES, "delete_button", "Delete", (560, 500, 1020, 640), "delete", colour="#d93025"),
    ]
    if state.get("status_message"):
        nodes.append(_label((60, 680, 1020, 760), state["status_message"], f"{NOTES}:id/status", "status"))
    notes: list[str] = state["notes"]
    items = []
    if not notes:
        empty = (60, NOTES_LIST_TOP + 40, 1020, NOTES_LIST_TOP + 120)
        items.append(_label(empty, "No notes yet", f"{NOTES}:id/empty", "hint"))
    for index, note in enumerate(notes):
        top = NOTES_LIST_TOP + index * NOTE_ROW - int(state.get("notes_scroll", 0))
        if top + NOTE_ROW <= NOTES_LIST_TOP or top >= HEIGHT:
            continue  # scrolled out of view: a RecyclerView has no node for it
        bounds = (0, max(top, NOTES_LIST_TOP), WIDTH, min(top + NOTE_ROW, HEIGHT))
        item = _tappable("android.widget.TextView", bounds, "noop", "item", text=note)
        item.resource_id = f"{NOTES}:id/note_item"
        items.append(item)
    notes_list = Node(
        "androidx.recyclerview.widget.RecyclerView", (0, NOTES_LIST_TOP, WIDTH, HEIGHT), children=items
    )
    notes_list.resource_id = f"{NOTES}:id/notes_list"
    notes_list.scrollable = notes_list.focusable = len(notes) > notes_capacity()
    nodes.append(notes_list)
    return nodes


def notes_capacity() -> int:
    """How many saved notes fit the list without scrolling."""
    return (HEIGHT - NOTES_LIST_TOP) // NOTE_ROW


def _settings(state: dict[str, Any]) -> list[Node]:
    nodes = [_title(SETTINGS, "Settings")]
    for row, (key, label) in enumerate(SETTING_ROWS):
        top = 300 + row * 200
        on = bool(state["settings"].get(key))
        switch = _tappable(
            "android.widget.Switch",
            (840, top + 50, 1020, top + 150),
            f"toggle:{key}",
            "switch",
            text="ON" if on else "OFF",
            resource_id=f"{SETTINGS}:id/{key}_switch",
            checkable=True,
            checked=on,
        )
        title = _label((60, top + 60, 760, top + 140), label, "android:id/title", "label")
        row_id = f"{SETTINGS}:id/{key}_row"
        row = _tappable("android.widget.LinearLayout", (0, top, WIDTH, top + 200), f"toggle:{key}", "row")
        row.resource_id, row.children = row_id, [title, switch]
        nodes.append(row)
    return nodes


def _calculator(state: dict[str, Any]) -> list[Node]:
    nodes = [
        _title(CALCULATOR, "Calculator"),
        _label((60, 300, 1020, 600), state["calculator"]["display"], f"{CALCULATOR}:id/result", "display"),
    ]
    for index, key in enumerate(CALC_KEYS):
        left, top = 60 + (index % 4) * 240, 700 + (index // 4) * 240
        name = CALC_KEY_IDS.get(key, f"digit_{key}")
        nodes.append(
            _button(
                CALCULATOR,
                name,
                key,
                (left, top, left + 220, top + 220),
                f"calc:{key}",
                colour="#455a64" if key.isdigit() else "#1a73e8",
            )
        )
    return nodes


def _messages(state: dict[str, Any]) -> list[Node]:
    """A chat as real apps build it: a clickable row without a name around a "Delete" label, a
    "Slide to pay" slider, a message field (ENTER sends) and a send icon known only by its id; with
    ``permission_dialog`` set, an SMS permission dialog on top."""
    row = _tappable("android.widget.LinearLayout", (0, 300, WIDTH, 460), "noop", "row")
    row.resource_id = f"{MESSAGES}:id/conversation_menu"
    row.children = [_label((60, 340, 400, 420), "Delete", "", "label")]
    slider = _tappable("android.widget.SeekBar", (60, 600, 1020, 720), "noop", "switch")
    slider.content_desc = "Slide to pay"
    field = _tappable(
        "android.widget.EditText",
        (60, 2200, 880, 2340),
        "focus:message",
        "edit",
        hint="Message",
        resource_id=f"{MESSAGES}:id/compose",
    )
    send = _tappable("android.widget.ImageButton", (900, 2200, 1040, 2340), "noop", "button")
    send.resource_id = f"{MESSAGES}:id/send"
    nodes = [_title(MESSAGES, "Messages"), row, slider, field, send]
    if state.get("permission_dialog"):
        question = "Allow Messages to send and view SMS messages?"
        nodes.append(
            Node(
                "android.widget.FrameLayout",
                (90, 900, 990, 1500),
                children=[
                    _label((130, 940, 950, 1100), question, "android:id/message", "label"),
                    _button(MESSAGES, "permission_allow_button", "Allow", (130, 1200, 950, 1320), "noop"),
                    _button(
                        MESSAGES, "permission_deny_button", "Don't allow", (130, 1340, 950, 1460), "noop"
                    ),
                ],
            )
        )
    return nodes


_SCREENS = {
    "messages": _messages,
    "launcher": _launcher,
    "notes": _notes,
    "settings": _settings,
    "calculator": _calculator,
}


def build(state: dict[str, Any]) -> Node:
    """The view tree of the current screen."""
    screen = state["screen"]
    return Node("android.widget.FrameLayout", (0, 0, WIDTH, HEIGHT), children=_SCREENS[screen](state))


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _attribute(value: str) -> str:
    # By hand: xml.sax.saxutils pulls in urllib and email, a third of every adb call's start-up.
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _node_xml(node: Node, index: int, package: str) -> str:
    text = node.text or (node.hint if node.style == "edit" else "")  # Android reports an empty field's hint
    left, top, right, bottom = node.bounds
    pairs = [
        ("index", str(index)),
        ("text", _attribute(text)),
        ("resource-id", node.resource_id),
        ("class", node.cls),
        ("package", package),
        ("content-desc", _attribute(node.content_desc)),
        ("checkable", _flag(node.checkable)),
        ("checked", _flag(node.checked)),
        ("clickable", _flag(node.clickable)),
        ("enabled", "true"),
        ("focusable", _flag(node.focusable)),
        ("focused", _flag(node.focused)),
        ("scrollable", _flag(node.scrollable)),
        ("long-clickable", _flag(node.long_clickable)),
        ("password", "false"),
        ("selected", "false"),
        ("bounds", f"[{left},{top}][{right},{bottom}]"),
    ]
    attrs = " ".join(f'{name}="{value}"' for name, value in pairs)
    if not node.children:
        return f"<node {attrs} />"
    inner = "".join(_node_xml(child, i, package) for i, child in enumerate(node.children))
    return f"<node {attrs}>{inner}</node>"


def dump_xml(state: dict[str, Any]) -> str:
    """The uiautomator dump of the current screen, in the device's one-line format."""
    package = SCREEN_PACKAGES[state["screen"]]
    body = _node_xml(build(state), 0, package)
    header = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    return f'{header}<hierarchy rotation="0">{body}</hierarchy>'
