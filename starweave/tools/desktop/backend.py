"""The platform-neutral desktop interface, plus the state both backends share.

Controls are addressed by the ids of the most recent ``window_controls`` walk ("1", "2", ...); a new
walk (of any window) replaces them. Window ids are stable strings (the X window id on Linux, the
native handle on Windows).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

from starweave.errors import ControlNotFound, DesktopError, WindowNotFound
from starweave.tools.desktop.model import ControlInfo, Drag, WalkLimits, WindowInfo

T = TypeVar("T")
W = TypeVar("W")


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

    async def drag(self, move: Drag) -> None:
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


def known_window(window_id: str, listed: Callable[[], dict[str, W]], relist: Callable[[], object]) -> W:
    """The window ``window_id`` of the last listing (``listed()``); an unknown id lists the windows
    again first (``relist``), then raises WindowNotFound naming the open ones."""
    if str(window_id) not in listed():
        relist()
    windows = listed()
    try:
        return windows[str(window_id)]
    except KeyError as exc:
        raise WindowNotFound(
            f"Window '{window_id}' not found. Open windows: {list(windows)}; list the windows again."
        ) from exc


@dataclass
class WalkState:
    """The most recent walk: which window, its controls and their native elements."""

    window_id: str | None = None
    controls: dict[str, ControlInfo] = field(default_factory=dict)
    elements: dict[str, Any] = field(default_factory=dict)
    # Control id -> the top-level window holding it, when it is not ``window_id`` (a modal dialog
    # of the walked window's application).
    owners: dict[str, str] = field(default_factory=dict)

    def replace(
        self,
        window_id: str,
        controls: list[ControlInfo],
        elements: dict[str, Any],
        owners: dict[str, str] | None = None,
    ) -> None:
        self.window_id = window_id
        self.controls = {c.id: c for c in controls}
        self.elements = dict(elements)
        self.owners = dict(owners or {})

    def owner(self, control_id: str) -> str | None:
        """The window holding the control (the walked window unless it sits in a dialog)."""
        return self.owners.get(str(control_id), self.window_id)

    def get(self, control_id: str) -> tuple[ControlInfo, Any]:
        """The control and its element; raises :class:`ControlNotFound` listing the valid ids."""
        key = str(control_id)
        if key not in self.controls:
            raise ControlNotFound(
                f"Control with id '{key}' not found. Available control ids: {list(self.controls)}"
                + ("" if self.controls else " (walk the window's controls first)")
            )
        return self.controls[key], self.elements[key]


@dataclass
class _Job:
    fn: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    cancel: threading.Event


class WorkerThread:
    """One dedicated daemon thread for a backend's blocking calls (accessibility APIs are not
    thread-safe).

    When the awaiting coroutine is cancelled (or times out) the call's cancel flag is set: a call not
    yet started is dropped, and a running one sees :meth:`cancelled` turn true between its steps
    (typing, walking) and returns early. The thread is a daemon, so a stuck call never delays exit.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._current: threading.Event | None = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if not self._thread.is_alive():
            raise DesktopError("The desktop backend was closed; create a new one.")
        loop = asyncio.get_running_loop()
        job = _Job(lambda: fn(*args), loop, loop.create_future(), threading.Event())
        self._jobs.put(job)
        try:
            return cast(T, await job.future)
        except asyncio.CancelledError:
            job.cancel.set()
            raise

    def cancelled(self) -> bool:
        """True when the call running now was cancelled by its caller (check it between steps)."""
        current = self._current
        return current is not None and current.is_set()

    def shutdown(self) -> None:
        """Stop taking calls; the running one is asked to stop."""
        if self._current is not None:
            self._current.set()
        self._jobs.put(None)

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            if job.cancel.is_set():
                continue
            self._current = job.cancel
            try:
                value = job.fn()
            except BaseException as exc:  # handed to the awaiting coroutine, which re-raises it
                _deliver(job, None, exc)
            else:
                _deliver(job, value, None)
            finally:
                self._current = None


def _deliver(job: _Job, value: Any, exc: BaseException | None) -> None:
    def settle() -> None:
        if job.future.done():
            return  # the caller gave up (cancelled) already
        if exc is not None:
            job.future.set_exception(exc)
        else:
            job.future.set_result(value)

    # A closed event loop raises RuntimeError: nobody waits for this result any more.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(settle)
