"""UICollector ("UFO UI Data MCP Server"): the data-collection tools of HostAgent and AppAgent.

Windows, window info, the controls of the selected window, screenshots and the UI tree (spec C
§13.1). The framework calls these tools; the model never sees them. Window ids are 1-based
annotation ids of the last ``get_desktop_app_info``; control labels are the ids of the last control
walk of the selected window.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from pydantic import Field

from starweave.errors import WindowNotFound
from starweave.tools.desktop.model import ControlInfo, WindowInfo
from starweave.tools.servers.desktop.state import (
    ACTION_ERRORS,
    BACKEND_ERRORS,
    NO_WINDOW_SELECTED,
    UIState,
    describe,
    rect_dict,
    rect_ltrb,
)

UI_COLLECTOR_NAME = "UFO UI Data MCP Server"
GONE_RECHECK_SECONDS = 0.5
CONTROL_SOURCE = "uia"  # TargetInfo.source when the backend does not say (the reference's value)

WINDOW_FIELDS: dict[str, Callable[[WindowInfo], Any]] = {
    "control_text": lambda w: w.title or w.name,
    "control_type": lambda w: w.control_type,
    "control_rect": lambda w: rect_dict(w.rectangle),
    "process_id": lambda w: w.process_id,
    "class_name": lambda w: w.class_name,
    "is_visible": lambda w: w.is_visible,
    "is_enabled": lambda w: True,
    "name": lambda w: w.name,
    "title": lambda w: w.title,
    "handle": lambda w: w.handle,
    "is_minimized": lambda w: w.is_minimized,
    "is_maximized": lambda w: w.is_maximized,
    "is_active": lambda w: w.is_active,
}

# The reference's field names first, then TargetInfo's names for the same values.
CONTROL_FIELDS: dict[str, Callable[[ControlInfo], Any]] = {
    "label": lambda c: c.id,
    "control_text": lambda c: c.name,
    "control_type": lambda c: c.control_type,
    "control_rect": lambda c: rect_ltrb(c.rect),
    "is_enabled": lambda c: c.is_enabled,
    "is_visible": lambda c: c.is_visible,
    "automation_id": lambda c: getattr(c, "automation_id", ""),
    "actions": lambda c: list(getattr(c, "actions", []) or []),
    "value": lambda c: getattr(c, "value", ""),
    "depth": lambda c: getattr(c, "depth", 0),
    "id": lambda c: c.id,
    "name": lambda c: c.name,
    "type": lambda c: c.control_type,
    "rect": lambda c: rect_ltrb(c.rect),
}
DEFAULT_CONTROL_FIELDS = ["label", "control_text", "control_type", "control_rect", "is_enabled", "is_visible"]
DEFAULT_WINDOW_FIELDS = ["control_text", "control_type", "control_rect", "process_id", "class_name"]


def _check_fields(fields: list[str], known: dict[str, Any], what: str) -> None:
    unknown = [f for f in fields if f not in known]
    if unknown:
        raise McpToolError(f"Unknown {what} field(s) {unknown}; supported fields: {list(known)}")


def window_entry(annotation_id: str, window: WindowInfo) -> dict[str, Any]:
    """One entry of ``get_desktop_app_info``."""
    return {"id": annotation_id, "name": window.name, "type": window.control_type, "kind": "window"}


async def refresh_windows(state: UIState, remove_empty: bool, refresh: bool) -> dict[str, WindowInfo]:
    """The window list keyed by 1-based annotation id, re-read from the desktop when ``refresh``."""
    if refresh or not state.last_app_windows:
        try:
            windows = await state.backend.list_windows()
        except BACKEND_ERRORS as exc:
            raise McpToolError(f"Failed to list the desktop windows: {describe(exc)}") from None
        if remove_empty:
            windows = [w for w in windows if (w.name or w.title).strip()]
        state.last_app_windows = {str(i): w for i, w in enumerate(windows, start=1)}
    return state.last_app_windows


async def walk_controls(state: UIState) -> list[ControlInfo]:
    """Walk the selected window's controls and remember them as the control dictionary."""
    window = state.require_window()
    try:
        try:
            controls = await state.backend.window_controls(window.id, state.limits)
        except WindowNotFound:
            # One listing can miss a window that is still open (its application busy on the
            # accessibility bus): look once more before calling it closed.
            await asyncio.sleep(GONE_RECHECK_SECONDS)
            controls = await state.backend.window_controls(window.id, state.limits)
    except WindowNotFound:
        # Closed behind our back (by the application, the user or a key chord): acting on it again
        # would go to a dead window, so the HostAgent has to select one anew.
        state.clear_selection()
        raise McpToolError(
            f"The selected window '{window.name}' is gone (it was closed); select a window again."
        ) from None
    except BACKEND_ERRORS as exc:
        raise McpToolError(
            f"Failed to read the controls of window '{window.name}': {describe(exc)}"
        ) from None
    state.control_dict = {str(c.id): c for c in controls}
    return controls


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def create_ui_collector_server(state: UIState) -> MCPServer:
    """Build UICollector over ``state`` (shared with HostUIExecutor and AppUIExecutor)."""
    srv = MCPServer(UI_COLLECTOR_NAME, log_level="WARNING")

    @srv.tool()
    async def get_desktop_app_info(
        remove_empty: Annotated[bool, Field(description="Leave out windows without a name.")] = True,
        refresh_app_windows: Annotated[
            bool, Field(description="Re-read the windows from the desktop (False: reuse the last list).")
        ] = True,
    ) -> list[dict[str, Any]]:
        """List the application windows on the desktop: [{"id": "1", "name", "type", "kind": "window"}].

        The 1-based ids are what select_application_window expects.
        """
        windows = await refresh_windows(state, remove_empty, refresh_app_windows)
        return [window_entry(i, w) for i, w in windows.items()]

    @srv.tool()
    async def get_desktop_app_target_info(
        remove_empty: Annotated[bool, Field(description="Leave out windows without a name.")] = True,
        refresh_app_windows: Annotated[
            bool, Field(description="Re-read the windows from the desktop (False: reuse the last list).")
        ] = True,
    ) -> list[dict[str, Any]]:
        """The application windows as TargetInfo: [{"kind": "window", "id", "name", "type", "rect"}]."""
        windows = await refresh_windows(state, remove_empty, refresh_app_windows)
        return [
            {
                "kind": "window",
                "id": i,
                "name": w.name,
                "type": w.control_type,
                "rect": rect_ltrb(w.rectangle),
            }
            for i, w in windows.items()
        ]

    @srv.tool()
    async def get_app_window_info(
        field_list: Annotated[
            list[str], Field(description=f"Fields to return, from: {list(WINDOW_FIELDS)}.")
        ] = DEFAULT_WINDOW_FIELDS,
    ) -> dict[str, Any]:
        """Information about the selected application window, one entry per requested field."""
        _check_fields(field_list, WINDOW_FIELDS, "window")
        state.require_window()
        await state.current_rect()  # refreshes the window's state (rectangle, focus) from the desktop
        window = state.require_window()
        return {f: WINDOW_FIELDS[f](window) for f in field_list}

    @srv.tool()
    async def get_app_window_controls_info(
        field_list: Annotated[
            list[str], Field(description=f"Fields to return per control, from: {list(CONTROL_FIELDS)}.")
        ] = DEFAULT_CONTROL_FIELDS,
    ) -> list[dict[str, Any]]:
        """Walk the selected window and list its controls (label, text, type, [l,t,r,b] rect, state).

        The labels are the ids the action tools (click_input, set_edit_text, ...) take.
        """
        _check_fields(field_list, CONTROL_FIELDS, "control")
        controls = await walk_controls(state)
        return [{f: CONTROL_FIELDS[f](c) for f in field_list} for c in controls]

    @srv.tool()
    async def get_app_window_controls_target_info(
        field_list: Annotated[
            list[str], Field(description=f"Extra fields per control, from: {list(CONTROL_FIELDS)}.")
        ] = DEFAULT_CONTROL_FIELDS,
    ) -> list[dict[str, Any]]:
        """Walk the selected window; each control as TargetInfo {kind: "control", id, name, type, rect,
        source} plus the requested fields."""
        _check_fields(field_list, CONTROL_FIELDS, "control")
        controls = await walk_controls(state)
        result = []
        for c in controls:
            entry: dict[str, Any] = {f: CONTROL_FIELDS[f](c) for f in field_list}
            entry.update(
                kind="control",
                id=c.id,
                name=c.name,
                type=c.control_type,
                rect=rect_ltrb(c.rect),
                source=getattr(c, "source", "") or CONTROL_SOURCE,
            )
            result.append(entry)
        return result

    @srv.tool()
    async def capture_window_screenshot() -> str:
        """A screenshot of the selected window as a base64 PNG string (or "Error: ...")."""
        window = state.selected_app_window
        if window is None:
            return NO_WINDOW_SELECTED
        try:
            return _b64(await state.backend.screenshot(window.id))
        except ACTION_ERRORS as exc:
            return f"Error capturing screenshot: {describe(exc)}"

    @srv.tool()
    async def capture_desktop_screenshot(
        all_screens: Annotated[
            bool, Field(description="All screens (True) or the primary one (the X11 backend has one).")
        ] = True,
    ) -> str:
        """A screenshot of the whole desktop as a base64 PNG string (or "Error: ...")."""
        try:
            return _b64(await state.backend.screenshot(None))
        except ACTION_ERRORS as exc:
            return f"Error capturing screenshot: {describe(exc)}"

    @srv.tool()
    async def get_ui_tree() -> dict[str, Any]:
        """The selected window's UI tree {control_type, name, children: [...]} (or {"error": ...})."""
        window = state.selected_app_window
        if window is None:
            return {"error": "No window selected"}
        try:
            return await state.backend.ui_tree(window.id, state.limits)
        except ACTION_ERRORS as exc:
            return {"error": f"Error getting UI tree: {describe(exc)}"}

    return srv
