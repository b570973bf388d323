"""The platform-neutral desktop interface, plus the state both backends share.

Controls are addressed by the ids of the most recent ``window_controls`` walk ("1", "2", ...); a new
walk (of any window) replaces them. Window ids are stable strings (the X window id on Linux, the
native handle on Windows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from starweave.errors import ControlNotFound
from starweave.tools.desktop.model import ControlInfo, WalkLimits, WindowInfo

T = TypeVar("T")


@runtime_checkable
class DesktopBackend(Protocol):
    """What the UI MCP servers need from a desktop. Every method is async; blocking work runs on a
    worker thread. Actions return once the UI has settled (or a settle timeout passed)."""

    platform: str

    async def list_windows(self) -> list[WindowInfo]:
        """Visible top-level application windows."""
        ...

    async def focus_window(self, window_id: str) -> WindowInfo:
        """Raise the window and give it the keyboard focus."""
        ...

    async def window_controls(self, window_id: str, limits: WalkLimits | None = None) -> list[ControlInfo]:
        """Walk the window (bounded, best effort); the result's ids address controls from now on."""
        ...

    async def ui_tree(self, window_id: str, limits: WalkLimits | None = None) -> dict[str, Any]:
        """Nested ``{id, name, control_type, rectangle, adjusted_rectangle, relative_rectangle, level,
        children}`` of the window."""
        ...

    async def screenshot(self, window_id: str | None = None) -> bytes:
        """PNG of the window, or of the whole desktop when ``window_id`` is None."""
        ...

    async def click(
        self,
        control_id: str | None = None,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        double: bool = False,
    ) -> None:
        """Click a control of the last walk (at its centre) or the screen point (x, y)."""
        ...

    async def drag(
        self,
        x1: int,
        y1: int,
        x2: int,
        y2: int,
        button: str = "left",
        duration: float = 1.0,
        key_hold: str | None = None,
    ) -> None:
        """Drag between two screen points, optionally holding "ctrl" or "shift"."""
        ...

    async def set_text(self, control_id: str, text: str, clear: bool = False) -> None:
        """Replace (``clear``) or insert text in an editable control."""
        ...

    async def type_keys(self, keys: str, control_id: str | None = None) -> None:
        """Send keys in pywinauto syntax to the focused window (to the control first when given)."""
        ...

    async def scroll(self, control_id: str, wheel_dist: int) -> None:
        """Turn the mouse wheel over the control: positive up, negative down."""
        ...

    async def get_text(self, control_id: str) -> str:
        """The control's current text (read live, not from the walk)."""
        ...

    async def launch(self, command: str, wait: float = 15.0) -> int:
        """Start an application and wait (up to ``wait`` s) until it shows a window; returns its pid."""
        ...

    async def close_window(self, window_id: str) -> bool:
        """Ask the window to close; True when it is gone within a few seconds."""
        ...

    async def aclose(self) -> None:
        """Release the worker thread (launched applications keep running)."""
        ...


@dataclass
class WalkState:
    """The most recent walk: which window, its controls and their native elements."""

    window_id: str | None = None
    controls: dict[str, ControlInfo] = field(default_factory=dict)
    elements: dict[str, Any] = field(default_factory=dict)

    def replace(self, window_id: str, controls: list[ControlInfo], elements: dict[str, Any]) -> None:
        self.window_id = window_id
        self.controls = {c.id: c for c in controls}
        self.elements = dict(elements)

    def get(self, control_id: str) -> tuple[ControlInfo, Any]:
        """The control and its element; raises :class:`ControlNotFound` listing the valid ids."""
        key = str(control_id)
        if key not in self.controls:
            raise ControlNotFound(
                f"Control with id '{key}' not found. Available control ids: {list(self.controls)}"
                + ("" if self.controls else " (walk the window's controls first)")
            )
        return self.controls[key], self.elements[key]


class WorkerThread:
    """One dedicated thread for a backend's blocking calls (accessibility APIs are not thread-safe)."""

    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args))

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
