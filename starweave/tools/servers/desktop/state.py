"""UIState: what UICollector, HostUIExecutor and AppUIExecutor share within one agent session.

The reference keeps this in a process-wide singleton (``UIServerState``). We keep one per session
instead: :func:`shared_ui_state` hands out one ``UIState`` per ``ShellConfig`` object, and every
``MCPServerManager`` (one per session) passes its own ``ShellConfig`` to all the local servers it
builds, so the three servers of a session meet on the same state while two sessions never do.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from starweave.config.models import ShellConfig
from starweave.errors import StarweaveError
from starweave.tools.desktop.backend import DesktopBackend
from starweave.tools.desktop.model import ControlInfo, Rect, WalkLimits, WindowInfo

BackendFactory = Callable[[], DesktopBackend]
"""Builds the platform backend on first use (so importing the servers never touches the desktop)."""

# What a platform backend raises when the desktop refuses an operation: our own errors, OS and
# subprocess failures, and GLib.Error (a RuntimeError subclass) from AT-SPI.
BACKEND_ERRORS: tuple[type[BaseException], ...] = (
    StarweaveError,
    OSError,
    RuntimeError,
    ValueError,
    LookupError,
    TimeoutError,
)

# The same plus our own refusals (a backend that cannot start raises McpToolError).
ACTION_ERRORS: tuple[type[BaseException], ...] = (McpToolError, *BACKEND_ERRORS)

NO_WINDOW_SELECTED = "Error: No window selected"
MAX_WAIT_SECONDS = 300.0
NO_WINDOWS_AVAILABLE = "No application windows available. Please call get_desktop_app_info first."


def default_backend() -> DesktopBackend:
    """The platform's backend from ``starweave.tools.desktop`` (AT-SPI + X11 on Linux, UIA on Windows)."""
    try:
        from starweave.tools.desktop import get_backend
    except ImportError as exc:
        raise McpToolError(
            f"The desktop backend is not available ({exc}); install the 'desktop' extra "
            "(PyGObject, mss, Pillow) and run on an X11 desktop or under Xvfb"
        ) from None
    backend: DesktopBackend = get_backend()
    return backend


def rect_dict(rect: Rect) -> dict[str, int]:
    """``{"x", "y", "width", "height"}`` (how the reference shows a window rectangle)."""
    return {"x": int(rect.x), "y": int(rect.y), "width": int(rect.width), "height": int(rect.height)}


def rect_ltrb(rect: Rect) -> list[int]:
    """``[left, top, right, bottom]`` (how the reference shows a control rectangle and TargetInfo.rect)."""
    return [int(rect.x), int(rect.y), int(rect.x + rect.width), int(rect.y + rect.height)]


@dataclass
class UIState:
    """Selected window, last window list and control dictionary of one agent session.

    ``last_app_windows`` maps the 1-based annotation ids of the last ``get_desktop_app_info`` to
    windows; ``control_dict`` maps the labels of the last control walk of the selected window to
    controls (the backend addresses controls by the same ids).
    """

    backend_factory: BackendFactory = default_backend
    limits: WalkLimits = field(default_factory=WalkLimits)
    max_wait_seconds: float = MAX_WAIT_SECONDS
    shell: ShellConfig | None = None  # the session's SHELL settings: launch_application obeys its mode
    selected_app_window: WindowInfo | None = None
    selected_annotation_id: str | None = None
    last_app_windows: dict[str, WindowInfo] = field(default_factory=dict)
    control_dict: dict[str, ControlInfo] = field(default_factory=dict)
    _backend: DesktopBackend | None = field(default=None, repr=False)

    @property
    def backend(self) -> DesktopBackend:
        """The backend, built on first use; ToolError when this platform has none."""
        if self._backend is None:
            try:
                self._backend = self.backend_factory()
            except McpToolError:
                raise
            except BACKEND_ERRORS as exc:
                raise McpToolError(f"The desktop backend could not start: {describe(exc)}") from None
        return self._backend

    async def aclose(self) -> None:
        """Stop the backend (its worker thread); a later call builds a new one."""
        backend, self._backend = self._backend, None
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()

    def select(self, annotation_id: str, window: WindowInfo) -> None:
        """Make ``window`` the selected one; the controls of any previous window are forgotten."""
        self.selected_app_window = window
        self.selected_annotation_id = annotation_id
        self.control_dict = {}

    def clear_selection(self) -> None:
        """Forget the selected window and its controls."""
        self.selected_app_window = None
        self.selected_annotation_id = None
        self.control_dict = {}

    def require_window(self) -> WindowInfo:
        """The selected window; ToolError naming what to call when there is none."""
        if self.selected_app_window is None:
            raise McpToolError(f"{NO_WINDOW_SELECTED}. Call select_application_window first.")
        return self.selected_app_window

    def find_control(self, control_id: str) -> ControlInfo:
        """The control labelled ``control_id`` in the last walk; ToolError listing the labels if absent."""
        control = self.control_dict.get(str(control_id))
        if control is None:
            raise McpToolError(
                f"Control with id '{control_id}' not found. Available control ids: {list(self.control_dict)}"
            )
        return control

    async def current_rect(self) -> Rect:
        """The selected window's rectangle now (the window may have moved since it was selected)."""
        window = self.require_window()
        try:
            for live in await self.backend.list_windows():
                if live.id == window.id:
                    self.selected_app_window = live
                    return live.rectangle
        except BACKEND_ERRORS:
            pass  # fall back to the rectangle seen at selection time, which is usually still right
        return window.rectangle


_STATES: dict[int, UIState] = {}


def shared_ui_state(shell: ShellConfig, backend_factory: BackendFactory | None = None) -> UIState:
    """The UIState of the session that owns ``shell`` (created on first request).

    Keyed by the identity of the ``ShellConfig`` object, which each ``MCPServerManager`` passes to
    every local server it builds; the entry disappears with that object.
    """
    key = id(shell)
    state = _STATES.get(key)
    if state is None:
        # A copy: the state must not keep ``shell`` alive, or its entry would never be dropped.
        state = UIState(backend_factory=backend_factory or default_backend, shell=shell.model_copy())
        _STATES[key] = state
        weakref.finalize(shell, _STATES.pop, key, None)
    return state


def describe(exc: BaseException) -> str:
    """A one-line description of a backend failure."""
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, (StarweaveError, McpToolError)) else f"{type(exc).__name__}: {text}"
