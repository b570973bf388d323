"""AppUIExecutor ("UFO UI AppAgent Action MCP Server"): GUI actions in the selected window.

Tools, parameters and semantics of spec C §13.3: controls are addressed by the labels of the last
``get_app_window_controls_info`` walk (``id``) and their names (``name``; a mismatch is reported as a
warning but the action still goes to ``id``), coordinates are fractions 0–1 of the window, ``wait``
sleeps without blocking and at most 300 s, ``summary`` echoes its text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from pydantic import Field

from starweave.tools.desktop.model import ControlInfo, Drag, Rect
from starweave.tools.servers.desktop.state import ACTION_ERRORS, UIState, describe

APP_EXECUTOR_NAME = "UFO UI AppAgent Action MCP Server"

Button = Literal["left", "right", "middle", "x"]
ControlId = Annotated[str, Field(description="The control's label from get_app_window_controls_info.")]
ControlName = Annotated[str, Field(description="The control's name (text) shown with that label.")]


def name_warning(control: ControlInfo, name: str) -> str:
    """A warning when the model's ``name`` does not match the control's (empty when it matches)."""
    if not name or name == control.name:
        return ""
    return (
        f"Warning: control id '{control.id}' is named '{control.name}', not '{name}'; "
        f"the action was applied to control '{control.id}'. "
    )


def to_screen(rect: Rect, fx: float, fy: float) -> tuple[int, int]:
    """Screen pixels of the window fraction (``fx``, ``fy``); ToolError outside 0–1."""
    for label, value in (("x", fx), ("y", fy)):
        if not 0.0 <= value <= 1.0:
            raise McpToolError(
                f"Coordinate {label}={value} is outside the window; coordinates are fractions of the "
                "window between 0 and 1 (0.5 is the middle)"
            )
    return round(rect.x + fx * rect.width), round(rect.y + fy * rect.height)


async def _run(action: Awaitable[object], what: str) -> None:
    try:
        await action
    except ACTION_ERRORS as exc:
        raise McpToolError(f"Failed to {what}: {describe(exc)}") from None


def _shown(control: ControlInfo) -> str:
    # "Button '7' (id 3)": the id marked as one, so that no model reads the label 3 as the key 3.
    return f"{control.control_type} '{control.name}' (id {control.id})"


def create_app_executor_server(state: UIState) -> MCPServer:
    """Build AppUIExecutor over ``state`` (shared with UICollector and HostUIExecutor)."""
    srv = MCPServer(APP_EXECUTOR_NAME, log_level="WARNING")

    def control(control_id: str) -> ControlInfo:
        state.require_window()
        return state.find_control(control_id)

    @srv.tool()
    async def click_input(
        id: ControlId,
        name: ControlName,
        button: Annotated[Button, Field(description="Mouse button.")] = "left",
        double: Annotated[bool, Field(description="Double-click instead of a single click.")] = False,
    ) -> str:
        """Click a control of the selected window with the mouse."""
        target = control(id)
        await _run(state.backend.click(target.id, button=button, double=double), f"click {_shown(target)}")
        kind = "Double-clicked" if double else "Clicked"
        return f"{name_warning(target, name)}{kind} {_shown(target)} with the {button} button."

    @srv.tool()
    async def click_on_coordinates(
        x: Annotated[
            float, Field(description="Horizontal position as a fraction of the window width (0-1).")
        ],
        y: Annotated[float, Field(description="Vertical position as a fraction of the window height (0-1).")],
        button: Annotated[Button, Field(description="Mouse button.")] = "left",
        double: Annotated[bool, Field(description="Double-click instead of a single click.")] = False,
    ) -> str:
        """Click a point of the selected window given as fractions of its size (0.5, 0.5 is the centre)."""
        sx, sy = to_screen(await state.current_rect(), x, y)
        await _run(
            state.backend.click(None, x=sx, y=sy, button=button, double=double), f"click at ({sx}, {sy})"
        )
        kind = "Double-clicked" if double else "Clicked"
        return f"{kind} at ({x}, {y}) of the window (screen {sx}, {sy}) with the {button} button."

    @srv.tool()
    async def drag_on_coordinates(
        start_x: Annotated[float, Field(description="Start, fraction of the window width (0-1).")],
        start_y: Annotated[float, Field(description="Start, fraction of the window height (0-1).")],
        end_x: Annotated[float, Field(description="End, fraction of the window width (0-1).")],
        end_y: Annotated[float, Field(description="End, fraction of the window height (0-1).")],
        button: Annotated[Button, Field(description="Mouse button held during the drag.")] = "left",
        duration: Annotated[float, Field(description="Seconds the drag takes.", ge=0, le=60)] = 1.0,
        key_hold: Annotated[
            Literal["ctrl", "shift", "alt"] | None, Field(description="Key held during the drag.")
        ] = None,
    ) -> str:
        """Drag the mouse between two points of the selected window given as fractions of its size."""
        rect = await state.current_rect()
        x1, y1 = to_screen(rect, start_x, start_y)
        x2, y2 = to_screen(rect, end_x, end_y)
        await _run(
            state.backend.drag(Drag(x1, y1, x2, y2, button, duration, key_hold)),
            f"drag from ({x1}, {y1}) to ({x2}, {y2})",
        )
        held = f" holding {key_hold}" if key_hold else ""
        return f"Dragged from ({start_x}, {start_y}) to ({end_x}, {end_y}) of the window{held}."

    @srv.tool()
    async def set_edit_text(
        id: ControlId,
        name: ControlName,
        text: Annotated[str, Field(description="The text to enter.")],
        clear_current_text: Annotated[bool, Field(description="Clear the current text first.")] = False,
    ) -> str:
        """Enter text into an edit control (appended, or replacing the current text when asked)."""
        target = control(id)
        await _run(
            state.backend.set_text(target.id, text, clear_current_text), f"set the text of {_shown(target)}"
        )
        how = "Replaced the text of" if clear_current_text else "Entered text into"
        return f"{name_warning(target, name)}{how} {_shown(target)}: {text!r}."

    @srv.tool()
    async def keyboard_input(
        id: ControlId,
        name: ControlName,
        keys: Annotated[
            str,
            Field(
                description='Keys in pywinauto syntax: plain text, "{ENTER}", "{TAB 2}", "{VK_CONTROL}c" '
                '(Ctrl+C), "^a" (Ctrl+A), "+{TAB}" (Shift+Tab), "%{F4}" (Alt+F4).'
            ),
        ],
        control_focus: Annotated[
            bool, Field(description="Focus the control first (False: type into whatever has focus).")
        ] = True,
    ) -> str:
        """Send keystrokes, to a control or to the focused element of the selected window."""
        if control_focus:
            target = control(id)
            await _run(state.backend.type_keys(keys, control_id=target.id), f"send keys to {_shown(target)}")
            return f"{name_warning(target, name)}Sent keys {keys!r} to {_shown(target)}."
        state.require_window()
        await _run(state.backend.type_keys(keys), "send keys")
        return f"Sent keys {keys!r} to the focused element."

    @srv.tool()
    async def wheel_mouse_input(
        id: ControlId,
        name: ControlName,
        wheel_dist: Annotated[
            int, Field(description="Wheel notches: positive scrolls up, negative down.")
        ] = 0,
    ) -> str:
        """Scroll a control with the mouse wheel."""
        target = control(id)
        await _run(state.backend.scroll(target.id, wheel_dist), f"scroll {_shown(target)}")
        direction = "up" if wheel_dist > 0 else "down" if wheel_dist < 0 else "by 0 notches"
        amount = f" {abs(wheel_dist)} notch(es)" if wheel_dist else ""
        return f"{name_warning(target, name)}Scrolled {_shown(target)} {direction}{amount}."

    @srv.tool()
    async def texts(id: ControlId, name: ControlName) -> str:
        """Read the text of a control."""
        target = control(id)
        try:
            return await state.backend.get_text(target.id)
        except ACTION_ERRORS as exc:
            raise McpToolError(f"Failed to read the text of {_shown(target)}: {describe(exc)}") from None

    @srv.tool()
    async def wait(
        seconds: Annotated[float, Field(description="Seconds to wait for the UI (at most 300).")],
    ) -> str:
        """Wait for the application to update (loading, animations) without doing anything."""
        if seconds < 0:
            raise McpToolError(
                f"Cannot wait a negative time ({seconds} s); give 0 to {state.max_wait_seconds:g} seconds"
            )
        waited = min(float(seconds), state.max_wait_seconds)
        await asyncio.sleep(waited)
        capped = f" (capped from {seconds:g} s)" if waited < seconds else ""
        return f"Waited {waited:g} seconds{capped}."

    @srv.tool()
    async def summary(
        text: Annotated[str, Field(description="What you observe on the screen that answers the request.")],
    ) -> str:
        """Report an observation (e.g. the answer read from the window) without acting; echoes the text."""
        return text

    return srv
