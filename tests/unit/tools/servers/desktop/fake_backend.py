"""An in-memory desktop for the desktop MCP server tests: a calculator and an editor window."""

from __future__ import annotations

import asyncio
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from starweave.errors import WindowNotFound
from starweave.tools.desktop.model import ControlInfo, Drag, Rect, WalkLimits, WindowInfo


def tiny_png(width: int = 2, height: int = 2) -> bytes:
    """A valid grey PNG, built by hand so the tests need no imaging library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def _window(wid: str, name: str, cls: str, rect: Rect, kind: str = "Window", pid: int = 0) -> WindowInfo:
    return WindowInfo(
        id=wid, name=name, title=name, class_name=cls, rectangle=rect, control_type=kind, process_id=pid
    )


def _calculator_controls() -> list[ControlInfo]:
    return [
        ControlInfo(
            id="1",
            name="7",
            control_type="Button",
            rect=Rect(x=110, y=200, width=50, height=40),
            actions=["click"],
        ),
        ControlInfo(
            id="2",
            name="+",
            control_type="Button",
            rect=Rect(x=170, y=200, width=50, height=40),
            actions=["click"],
        ),
        ControlInfo(
            id="3",
            name="=",
            control_type="Button",
            rect=Rect(x=230, y=200, width=50, height=40),
            actions=["click"],
        ),
        ControlInfo(
            id="4",
            name="Display",
            control_type="Edit",
            rect=Rect(x=110, y=100, width=380, height=60),
            value="0",
        ),
        ControlInfo(
            id="5",
            name="Off",
            control_type="Button",
            rect=Rect(x=300, y=200, width=50, height=40),
            is_enabled=False,
        ),
    ]


def _editor_controls() -> list[ControlInfo]:
    return [
        ControlInfo(
            id="1",
            name="Text",
            control_type="Document",
            rect=Rect(x=600, y=120, width=500, height=400),
            value="hello",
        ),
        ControlInfo(
            id="2",
            name="Save",
            control_type="Button",
            rect=Rect(x=600, y=80, width=40, height=30),
            actions=["click"],
            automation_id="save",
        ),
    ]


@dataclass
class FakeDesktopBackend:
    """A DesktopBackend over two fake windows; records every action in ``calls``.

    Controls behave a little: calculator digit buttons append to the display, "=" evaluates it,
    set_text and type_keys edit a control's value. ``failures`` maps a method name to the exception
    that method raises next time (and every time after, until removed).
    """

    windows: list[WindowInfo] = field(default_factory=list)
    controls: dict[str, list[ControlInfo]] = field(default_factory=dict)
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    failures: dict[str, BaseException] = field(default_factory=dict)
    focused: str | None = None
    launch_delay: float = 0.05
    walked: str | None = None
    pending: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        if not self.windows:
            self.windows = [
                _window(
                    "w-calc",
                    "Calculator",
                    "gnome-calculator",
                    Rect(x=100, y=50, width=400, height=600),
                    "Frame",
                ),
                _window(
                    "w-edit", "notes.txt - Mousepad", "Mousepad", Rect(x=590, y=40, width=520, height=500)
                ),
                _window("w-empty", "", "Tooltip", Rect(x=0, y=0, width=10, height=10)),
            ]
            self.controls = {"w-calc": _calculator_controls(), "w-edit": _editor_controls()}

    def _check(self, method: str) -> None:
        if method in self.failures:
            raise self.failures[method]

    def _control(self, control_id: str) -> ControlInfo:
        assert self.walked is not None, "the backend addresses controls of its most recent walk"
        for control in self.controls[self.walked]:
            if control.id == control_id:
                return control
        raise LookupError(f"no control {control_id} in the last walk")

    async def list_windows(self) -> list[WindowInfo]:
        self._check("list_windows")
        return list(self.windows)

    async def focus_window(self, window_id: str) -> WindowInfo:
        self._check("focus_window")
        self.calls.append(("focus_window", window_id))
        self.focused = window_id
        for window in self.windows:
            window.is_active = window.id == window_id
        return next(w for w in self.windows if w.id == window_id)

    async def window_controls(self, window_id: str, limits: WalkLimits) -> list[ControlInfo]:
        self._check("window_controls")
        if all(w.id != window_id for w in self.windows):
            raise WindowNotFound(f"Window '{window_id}' not found.")
        self.walked = window_id
        return list(self.controls.get(window_id, []))[: limits.max_nodes]

    async def ui_tree(self, window_id: str, limits: WalkLimits) -> dict[str, Any]:
        self._check("ui_tree")
        window = next(w for w in self.windows if w.id == window_id)
        children = [
            {"control_type": c.control_type, "name": c.name, "children": []} for c in self.controls[window_id]
        ]
        return {"control_type": window.control_type, "name": window.name, "children": children}

    async def screenshot(self, window_id: str | None) -> bytes:
        self._check("screenshot")
        self.calls.append(("screenshot", window_id))
        return tiny_png(3 if window_id else 8, 2)

    async def click(
        self,
        control_id: str | None,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        double: bool = False,
    ) -> None:
        self._check("click")
        self.calls.append(("click", control_id, x, y, button, double))
        if control_id is None or self.walked != "w-calc":
            return
        control = self._control(control_id)
        display = self._control("4")
        if control.name == "=":
            left, _, right = display.value.partition("+")
            display.value = str(int(left or 0) + int(right or 0))
        elif control.control_type == "Button":
            display.value = control.name if display.value == "0" else display.value + control.name

    async def drag(self, move: Drag) -> None:
        self._check("drag")
        self.calls.append(
            ("drag", move.x1, move.y1, move.x2, move.y2, move.button, move.duration, move.key_hold)
        )

    async def set_text(self, control_id: str, text: str, clear: bool) -> None:
        self._check("set_text")
        control = self._control(control_id)
        control.value = text if clear else control.value + text
        self.calls.append(("set_text", control_id, text, clear))

    async def type_keys(self, keys: str, control_id: str | None = None) -> None:
        self._check("type_keys")
        self.calls.append(("type_keys", keys, control_id))
        if control_id is not None:
            control = self._control(control_id)
            control.value += keys.replace("{ENTER}", "\n")

    async def scroll(self, control_id: str, wheel_dist: int) -> None:
        self._check("scroll")
        self.calls.append(("scroll", control_id, wheel_dist))

    async def get_text(self, control_id: str) -> str:
        self._check("get_text")
        return self._control(control_id).value

    async def launch(self, command: str, wait: float = 15.0) -> int:
        self._check("launch")
        self.calls.append(("launch", command))
        pid = 50000 + len(self.calls)

        async def appear() -> None:
            await asyncio.sleep(self.launch_delay)
            name = command.split()[0].title()
            self.windows.append(
                _window(f"w-{pid}", name, "App", Rect(x=0, y=0, width=300, height=200), pid=pid)
            )

        if self.launch_delay >= 0:
            self.pending = asyncio.get_running_loop().create_task(appear())
        return pid

    async def close_window(self, window_id: str) -> bool:
        self._check("close_window")
        self.calls.append(("close_window", window_id))
        self.windows = [w for w in self.windows if w.id != window_id]
        return True
