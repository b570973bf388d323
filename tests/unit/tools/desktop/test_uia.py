"""The Windows backend against a fake ``uiautomation`` module and element tree."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from starweave.errors import ControlNotFound, DesktopError, WindowNotFound
from starweave.tools.desktop.model import Drag, SettlePolicy, WalkLimits
from starweave.tools.desktop.windows.sendkeys import escape_send_keys
from starweave.tools.desktop.windows.uia import UIABackend


@dataclass
class Box:
    left: int
    top: int
    right: int
    bottom: int


@dataclass
class FakeElement:
    Name: str
    ControlTypeName: str
    box: tuple[int, int, int, int]
    children: list[FakeElement] = field(default_factory=list)
    IsOffscreen: bool = False
    IsEnabled: bool = True
    AutomationId: str = ""
    ClassName: str = ""
    ProcessId: int = 0
    NativeWindowHandle: int = 0
    value: str | None = None
    broken: bool = False
    modal: bool = False
    read_only: bool = False
    focusable: bool = True
    closable: bool = True
    gone: bool = False
    log: list[Any] = field(default_factory=list)

    @property
    def BoundingRectangle(self) -> Box:
        if self.broken:
            raise RuntimeError("element is gone")
        return Box(*self.box)

    def GetChildren(self) -> list[FakeElement]:
        return [child for child in self.children if not child.gone]

    def GetValuePattern(self) -> Any:
        if self.value is None:
            raise LookupError("no ValuePattern")
        element = self

        class Pattern:
            IsReadOnly = element.read_only

            @property
            def Value(self) -> str:
                return element.value or ""

            def SetValue(self, text: str) -> None:
                element.value = text

        return Pattern()

    def GetWindowPattern(self) -> Any:
        def close() -> None:
            self.log.append(f"close {self.Name}")
            self.gone = self.closable

        return SimpleNamespace(WindowVisualState=1, IsModal=self.modal, Close=close)

    def SetActive(self) -> None:
        self.log.append(f"active {self.Name}")

    def SetFocus(self) -> None:
        if not self.focusable:
            raise RuntimeError("cannot take the focus")
        self.log.append(f"focus {self.Name}")


class FakeAuto:
    """The surface of ``uiautomation`` the backend uses, recording every input call."""

    Keys = SimpleNamespace(VK_CONTROL=17, VK_SHIFT=16, VK_MENU=18, VK_RETURN=13, VK_TAB=9, VK_S=83, VK_A=65)

    def __init__(self, root: FakeElement, com: bool = True) -> None:
        self.root = root
        self.calls: list[Any] = []
        # (event, thread id) of COM entry/exit and of every desktop read, in order.
        self.trace: list[tuple[str, int]] = []
        self.foreground = 0
        self.focused: FakeElement | None = None
        if com:
            trace = self.trace

            class Initializer:
                def __enter__(self) -> Initializer:
                    trace.append(("com_enter", threading.get_ident()))
                    return self

                def __exit__(self, *exc: object) -> None:
                    trace.append(("com_exit", threading.get_ident()))

            self.UIAutomationInitializerInThread: Any = Initializer

    def GetRootControl(self) -> FakeElement:
        self.trace.append(("root", threading.get_ident()))
        return self.root

    def GetForegroundWindow(self) -> int:
        return self.foreground

    def GetFocusedControl(self) -> FakeElement:
        return self.focused or self.root

    def Click(self, x: int, y: int) -> None:
        self.calls.append(("click", x, y))

    def RightClick(self, x: int, y: int) -> None:
        self.calls.append(("right", x, y))

    def MiddleClick(self, x: int, y: int) -> None:
        self.calls.append(("middle", x, y))

    def DragDrop(self, x1: int, y1: int, x2: int, y2: int, moveSpeed: float = 1) -> None:
        self.calls.append(("drag", x1, y1, x2, y2))

    def SetCursorPos(self, x: int, y: int) -> None:
        self.calls.append(("cursor", x, y))

    def WheelUp(self, n: int) -> None:
        self.calls.append(("wheel_up", n))

    def WheelDown(self, n: int) -> None:
        self.calls.append(("wheel_down", n))

    def PressKey(self, key: int) -> None:
        self.calls.append(("press", key))

    def ReleaseKey(self, key: int) -> None:
        self.calls.append(("release", key))

    def SendKeys(self, text: str, interval: float = 0.01) -> None:
        self.calls.append(("send", text))


def tree() -> FakeElement:
    edit = FakeElement("Text Editor", "EditControl", (10, 40, 400, 300), value="old")
    ok = FakeElement("OK", "ButtonControl", (10, 310, 90, 340), AutomationId="okButton")
    gone = FakeElement("Ghost", "ButtonControl", (0, 0, 1, 1), broken=True)
    hidden = FakeElement("Hidden", "ButtonControl", (0, 0, 10, 10), IsOffscreen=True)
    pane = FakeElement("", "PaneControl", (0, 30, 410, 350), children=[edit, gone, ok, hidden])
    notepad = FakeElement(
        "Untitled - Notepad", "WindowControl", (0, 0, 410, 350), children=[pane],
        ClassName="Notepad", ProcessId=42, NativeWindowHandle=1001,
    )  # fmt: skip
    offscreen = FakeElement(
        "Hidden app", "WindowControl", (0, 0, 10, 10), IsOffscreen=True, NativeWindowHandle=7
    )
    nameless = FakeElement("", "WindowControl", (0, 0, 10, 10), NativeWindowHandle=8)
    return FakeElement("Desktop", "PaneControl", (0, 0, 1920, 1080), children=[notepad, offscreen, nameless])


@pytest.fixture
def fake() -> FakeAuto:
    return FakeAuto(tree())


@pytest.fixture
async def backend(fake: FakeAuto) -> Any:
    settle = SettlePolicy(first_change=0.0, max_wait=0.05, poll=0.001)
    b = UIABackend(settle=settle, auto=fake, observe=lambda: b"same")
    yield b
    await b.aclose()


async def test_lists_visible_named_windows(backend: UIABackend) -> None:
    windows = await backend.list_windows()
    assert [(w.id, w.name, w.process_id, w.class_name, w.is_maximized) for w in windows] == [
        ("1001", "Untitled - Notepad", 42, "Notepad", True)
    ]
    assert windows[0].rectangle.width == 410
    focused = await backend.focus_window("1001")
    assert focused.title == "Untitled - Notepad"
    with pytest.raises(WindowNotFound):
        await backend.focus_window("999")


async def test_walk_skips_broken_and_offscreen(backend: UIABackend) -> None:
    controls = await backend.window_controls("1001")
    assert [(c.id, c.name, c.control_type) for c in controls] == [
        ("1", "Text Editor", "Edit"),
        ("2", "OK", "Button"),
    ]
    assert controls[0].value == "old" and controls[1].automation_id == "okButton"
    tree_ = await backend.ui_tree("1001")
    pane = tree_["children"][0]
    assert pane["control_type"] == "Pane" and len(pane["children"]) == 4
    assert "error" in pane["children"][1]
    assert pane["children"][2]["adjusted_rectangle"] == {"left": 10, "top": 310, "right": 90, "bottom": 340}


async def test_actions_reach_uiautomation(backend: UIABackend, fake: FakeAuto) -> None:
    await backend.window_controls("1001")
    await backend.click("2")
    await backend.click(x=5, y=6, button="right", double=True)
    await backend.set_text("1", " new")
    assert await backend.get_text("1") == "old new"
    await backend.set_text("1", "fresh", clear=True)
    assert await backend.get_text("1") == "fresh"
    await backend.type_keys("{VK_CONTROL}s{ENTER}hi", control_id="1")
    await backend.scroll("1", -3)
    await backend.drag(Drag(1, 2, 3, 4, key_hold="shift"))
    assert fake.calls == [
        ("click", 50, 325),
        ("right", 5, 6),
        ("right", 5, 6),
        ("press", 17), ("press", 83), ("release", 83), ("release", 17),
        ("press", 13), ("release", 13),
        ("send", "hi"),
        ("cursor", 205, 170),
        ("wheel_down", 3),
        ("press", 16), ("drag", 1, 2, 3, 4), ("release", 16),
    ]  # fmt: skip
    with pytest.raises(ControlNotFound, match=r"Available control ids: \['1', '2'\]"):
        await backend.click("9")
    # A control without a ValuePattern gets the text typed like a user: a click, then literal keys.
    del fake.calls[:]
    await backend.set_text("2", "50% ~{x}", clear=True)
    assert fake.calls == [
        ("click", 50, 325), ("press", 17), ("press", 65), ("release", 65), ("release", 17),
        ("send", "50% ~{{}x{}}"),
    ]  # fmt: skip
    assert await backend.close_window("1001")
    assert "1001" not in [w.id for w in await backend.list_windows()]


async def test_literal_braces_are_escaped_in_one_pass(backend: UIABackend, fake: FakeAuto) -> None:
    await backend.type_keys("a{{}b{}}c")
    assert fake.calls[-1] == ("send", "a{{}b{}}c")
    assert escape_send_keys("}{") == "{}}{{}"


async def test_com_is_entered_once_on_the_worker_thread_before_any_uia_call(fake: FakeAuto) -> None:
    settle = SettlePolicy(first_change=0.0, max_wait=0.05, poll=0.001)
    names: list[str] = []

    def observe() -> bytes:
        names.append(threading.current_thread().name)
        return b""

    b = UIABackend(settle=settle, auto=fake, observe=observe)
    assert fake.trace == []  # nothing touches UIA (or COM) on the caller's thread
    await b.list_windows()
    await b.window_controls("1001")
    await b.click("2")
    assert await b.get_text("1") == "old"
    await b.aclose()
    await b.aclose()  # idempotent
    events = [event for event, _ in fake.trace]
    worker = fake.trace[0][1]
    assert events[0] == "com_enter" and events.count("com_enter") == 1
    assert events[-1] == "com_exit" and events.count("com_exit") == 1
    assert events.count("root") >= 2
    assert {tid for _, tid in fake.trace} == {worker} and worker != threading.get_ident()
    assert set(names) == {"starweave-uia"}  # the settle observations ran there too


async def test_a_module_without_the_com_initializer_still_works() -> None:
    b = UIABackend(auto=FakeAuto(tree(), com=False), observe=lambda: b"")
    assert [w.id for w in await b.list_windows()] == ["1001"]
    await b.aclose()


async def test_a_failing_com_initialisation_is_a_clear_error() -> None:
    fake = FakeAuto(tree())

    def broken() -> Any:
        raise OSError("CoInitializeEx failed")

    fake.UIAutomationInitializerInThread = broken
    b = UIABackend(auto=fake, observe=lambda: b"")
    with pytest.raises(DesktopError, match=r"Failed to initialise COM for UI Automation.*CoInitializeEx"):
        await b.list_windows()
    assert fake.trace == []  # no UIA call without COM
    await b.aclose()


def app_with_dialogs() -> tuple[FakeElement, dict[str, FakeElement]]:
    """Notepad (pid 42) with a top-level Save As dialog and a modal options window of its own, next to
    a second Notepad window, a hidden dialog of the same process and another process's dialog."""
    main = tree().children[0]
    save_as = FakeElement(
        "Save As", "WindowControl", (100, 100, 500, 400), ClassName="#32770", ProcessId=42,
        NativeWindowHandle=2001, children=[
            FakeElement("File name:", "EditControl", (110, 300, 400, 320), value="*.txt"),
            FakeElement("Save", "ButtonControl", (410, 360, 490, 390)),
        ],
    )  # fmt: skip
    options = FakeElement(
        "Options", "WindowControl", (50, 50, 200, 200), ClassName="WindowsForms10.Window", ProcessId=42,
        NativeWindowHandle=2004, modal=True,
        children=[FakeElement("Apply", "ButtonControl", (60, 60, 90, 80), ProcessId=42)],
    )  # fmt: skip
    second = FakeElement(
        "notes - Notepad", "WindowControl", (0, 0, 300, 300), ClassName="Notepad", ProcessId=42,
        NativeWindowHandle=1002, children=[FakeElement("Other", "ButtonControl", (5, 5, 50, 50))],
    )  # fmt: skip
    hidden = FakeElement(
        "Hidden", "WindowControl", (0, 0, 100, 100), ClassName="#32770", ProcessId=42, IsOffscreen=True,
        NativeWindowHandle=2005, children=[FakeElement("Ghost OK", "ButtonControl", (5, 5, 50, 50))],
    )  # fmt: skip
    other = FakeElement(
        "Calculator", "WindowControl", (0, 0, 300, 300), ClassName="#32770", ProcessId=77,
        NativeWindowHandle=3001, children=[FakeElement("7", "ButtonControl", (5, 5, 50, 50))],
    )  # fmt: skip
    desktop = FakeElement(
        "Desktop", "PaneControl", (0, 0, 1920, 1080), children=[save_as, options, main, second, hidden, other]
    )
    return desktop, {"main": main, "save_as": save_as, "options": options, "other": other}


async def test_the_apps_own_dialog_windows_are_walked_with_it() -> None:
    desktop, _ = app_with_dialogs()
    fake = FakeAuto(desktop)
    b = UIABackend(auto=fake, observe=lambda: b"", settle=SettlePolicy(first_change=0.0, max_wait=0.01))
    controls = await b.window_controls("1001")
    assert [(c.id, c.name) for c in controls] == [
        ("1", "Text Editor"), ("2", "OK"), ("3", "File name:"), ("4", "Save"), ("5", "Apply"),
    ]  # fmt: skip
    assert controls[2].value == "*.txt" and controls[3].rect.center == (450, 375)
    # A dialog walked on its own is just itself: its parent's other dialogs are not merged into it.
    assert [c.name for c in await b.window_controls("2001")] == ["File name:", "Save"]
    # The shared node budget reaches the dialogs first: with 2 nodes, the Options dialog and the Save
    # As dialog's edit are walked, the main window not at all (the main window's controls still come
    # first when there are any).
    limited = await b.window_controls("1001", limits=WalkLimits(max_nodes=2))
    assert [c.name for c in limited] == ["File name:", "Apply"]
    await b.aclose()


async def test_a_click_focuses_the_window_owning_the_control_first() -> None:
    desktop, parts = app_with_dialogs()
    fake = FakeAuto(desktop)
    for element in parts.values():
        element.log = fake.calls  # one ordered record of focus changes and input
    b = UIABackend(auto=fake, observe=lambda: b"", settle=SettlePolicy(first_change=0.0, max_wait=0.01))
    await b.window_controls("1001")
    await b.click("4")
    await b.click("2")
    await b.scroll("5", 2)
    assert fake.calls == [
        "active Save As", "focus Save As", ("click", 450, 375),
        "active Untitled - Notepad", "focus Untitled - Notepad", ("click", 50, 325),
        "active Options", "focus Options", ("cursor", 75, 70), ("wheel_up", 2),
    ]  # fmt: skip
    # Keys with no control stay where the focus is when it is in the application (its dialog) ...
    del fake.calls[:]
    fake.focused = parts["options"].children[0]
    await b.type_keys("a")
    assert fake.calls == [("send", "a")]
    # ... and go to the topmost walked window (the first dialog in z-order) when it is elsewhere.
    del fake.calls[:]
    fake.focused = parts["other"]
    await b.type_keys("b")
    assert fake.calls == ["active Save As", "focus Save As", ("send", "b")]
    await b.aclose()


async def test_a_window_that_cannot_take_the_focus_stops_the_click() -> None:
    desktop, parts = app_with_dialogs()
    fake = FakeAuto(desktop)

    def refuse() -> None:
        raise RuntimeError("SetForegroundWindow denied")

    b = UIABackend(auto=fake, observe=lambda: b"")
    await b.window_controls("1001")
    parts["save_as"].SetActive = refuse  # type: ignore[method-assign]
    with pytest.raises(DesktopError, match="Could not focus window '2001': SetForegroundWindow denied"):
        await b.click("4")
    assert fake.calls == []
    await b.aclose()


async def test_the_active_window_is_the_foreground_one(backend: UIABackend, fake: FakeAuto) -> None:
    assert [w.is_active for w in await backend.list_windows()] == [False]
    fake.foreground = 1001
    assert [w.is_active for w in await backend.list_windows()] == [True]


async def test_a_window_that_stays_open_is_reported(backend: UIABackend, fake: FakeAuto) -> None:
    fake.root.children[0].closable = False  # e.g. it asks whether to save first
    backend.close_wait = 0.05
    assert await backend.close_window("1001") is False
    assert fake.root.children[0].log[-1] == "close Untitled - Notepad"


async def test_read_only_or_unfocusable_controls_get_a_click_first(
    backend: UIABackend, fake: FakeAuto
) -> None:
    edit = fake.root.children[0].children[0].children[0]
    edit.read_only, edit.focusable = True, False
    await backend.window_controls("1001")
    await backend.set_text("1", "x")
    await backend.type_keys("y", control_id="1")
    assert edit.value == "old"  # the ValuePattern was not written ...
    assert fake.calls == [("click", 205, 170), ("send", "x"), ("click", 205, 170), ("send", "y")]  # ... typed
    with pytest.raises(ControlNotFound):
        await backend.type_keys("z", control_id="7")
    assert fake.root.children[0].log == ["active Untitled - Notepad", "focus Untitled - Notepad"] * 2
