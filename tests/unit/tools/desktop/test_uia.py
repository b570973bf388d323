"""The Windows backend against a fake ``uiautomation`` module and element tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from starweave.errors import ControlNotFound, DesktopError, WindowNotFound
from starweave.tools.desktop.model import SettlePolicy
from starweave.tools.desktop.windows.uia import UIABackend, escape_send_keys


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
    log: list[str] = field(default_factory=list)

    @property
    def BoundingRectangle(self) -> Box:
        if self.broken:
            raise RuntimeError("element is gone")
        return Box(*self.box)

    def GetChildren(self) -> list[FakeElement]:
        return self.children

    def GetValuePattern(self) -> Any:
        if self.value is None:
            raise LookupError("no ValuePattern")
        element = self

        class Pattern:
            @property
            def Value(self) -> str:
                return element.value or ""

            def SetValue(self, text: str) -> None:
                element.value = text

        return Pattern()

    def GetWindowPattern(self) -> Any:
        return SimpleNamespace(WindowVisualState=1, Close=lambda: self.log.append(f"close {self.Name}"))

    def SetActive(self) -> None:
        self.log.append(f"active {self.Name}")

    def SetFocus(self) -> None:
        self.log.append(f"focus {self.Name}")


class FakeAuto:
    """The surface of ``uiautomation`` the backend uses, recording every input call."""

    Keys = SimpleNamespace(VK_CONTROL=17, VK_SHIFT=16, VK_MENU=18, VK_RETURN=13, VK_TAB=9, VK_S=83, VK_A=65)

    def __init__(self, root: FakeElement) -> None:
        self.root = root
        self.calls: list[tuple[Any, ...]] = []

    def GetRootControl(self) -> FakeElement:
        return self.root

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
    await backend.drag(1, 2, 3, 4, key_hold="shift")
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
    with pytest.raises(DesktopError, match="does not accept text"):
        await backend.set_text("2", "x")
    assert await backend.close_window("1001")


async def test_literal_braces_are_escaped_in_one_pass(backend: UIABackend, fake: FakeAuto) -> None:
    await backend.type_keys("a{{}b{}}c")
    assert fake.calls[-1] == ("send", "a{{}b{}}c")
    assert escape_send_keys("}{") == "{}}{{}"
