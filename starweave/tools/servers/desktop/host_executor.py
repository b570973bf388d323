"""HostUIExecutor ("UFO UI HostAgent Action MCP Server"): pick, launch and close application windows.

``select_application_window`` follows spec C §13.2 (errors word for word). Launching and closing
are our additions for the issue's scope (the reference launches through ``run_shell``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

import psutil
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from pydantic import Field

from starweave.tools.desktop.model import WindowInfo
from starweave.tools.servers.desktop.launch_policy import launch_refusal
from starweave.tools.servers.desktop.state import (
    ACTION_ERRORS,
    BACKEND_ERRORS,
    NO_WINDOWS_AVAILABLE,
    UIState,
    describe,
    rect_dict,
)

HOST_EXECUTOR_NAME = "UFO UI HostAgent Action MCP Server"
LAUNCH_POLL_SECONDS = 0.25
MAX_LAUNCH_WAIT = 60.0


def _process_name(pid: int) -> str | None:
    try:
        return psutil.Process(pid).name() or None
    except (psutil.Error, ValueError):
        return None


async def root_name(window: WindowInfo) -> str:
    """The application's root name: its process name (``mousepad``, ``WINWORD.EXE``), as mcp.yaml keys it.

    A backend may give it directly (``process_name``); otherwise it is read from the process table,
    and the window class stands in when the process is gone.
    """
    given = getattr(window, "process_name", None)
    if given:
        return str(given)
    name = await asyncio.to_thread(_process_name, window.process_id) if window.process_id > 0 else None
    return name or getattr(window, "app_name", "") or window.class_name or window.name


def window_info_dict(annotation_id: str, window: WindowInfo) -> dict[str, Any]:
    """The reference's WindowInfo fields for ``window``."""
    return {
        "annotation_id": annotation_id,
        "name": window.name,
        "title": window.title,
        "handle": window.handle,
        "class_name": window.class_name,
        "process_id": window.process_id,
        "is_visible": window.is_visible,
        "is_minimized": window.is_minimized,
        "is_maximized": window.is_maximized,
        "is_active": window.is_active,
        "rectangle": rect_dict(window.rectangle),
        "text_content": window.title or window.name,
        "control_type": window.control_type,
    }


def lookup_window(state: UIState, window_id: str, tool: str) -> WindowInfo:
    """The window of the last ``get_desktop_app_info`` with annotation id ``window_id`` (the id
    ``tool`` was given)."""
    if not str(window_id).strip():
        raise McpToolError(f"Window id is required for {tool}")
    if not state.last_app_windows:
        raise McpToolError(NO_WINDOWS_AVAILABLE)
    window = state.last_app_windows.get(str(window_id))
    if window is None:
        raise McpToolError(
            f"Control with id '{window_id}' not found. Available control ids: {list(state.last_app_windows)}"
        )
    return window


async def _wait_for_window(state: UIState, pid: int, before: set[str], wait: float) -> WindowInfo | None:
    """The first window of ``pid`` (or else any new window) to appear within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            windows = await state.backend.list_windows()
        except BACKEND_ERRORS:
            windows = []  # the accessibility bus may be busy while the application starts; poll again
        fresh = [w for w in windows if w.id not in before]
        match = next((w for w in fresh if w.process_id == pid), None) or (fresh[0] if fresh else None)
        if match is not None or time.monotonic() >= deadline:
            return match
        await asyncio.sleep(LAUNCH_POLL_SECONDS)


def create_host_executor_server(state: UIState) -> MCPServer:
    """Build HostUIExecutor over ``state`` (shared with UICollector and AppUIExecutor)."""
    srv = MCPServer(HOST_EXECUTOR_NAME, log_level="WARNING")

    @srv.tool()
    async def select_application_window(
        id: Annotated[
            str, Field(description="The precise annotated id of the window, from get_desktop_app_info.")
        ],
        name: Annotated[str, Field(description="The precise name of the window with that id.")],
    ) -> dict[str, Any]:
        """Select an application window to work in and bring it to the front.

        Returns {"root_name": the application's process name, "window_info": {...}}.
        """
        window = lookup_window(state, id, "select_application_window")
        try:
            await state.backend.focus_window(window.id)
        except ACTION_ERRORS as exc:
            raise McpToolError(f"Failed to set focus on window: {describe(exc)}") from None
        state.select(str(id), window)
        result: dict[str, Any] = {
            "root_name": await root_name(window),
            "window_info": window_info_dict(str(id), window),
        }
        if name and name != window.name:
            result["warning"] = (
                f"Window id '{id}' is named '{window.name}', not '{name}'; selected window '{id}'."
            )
        return result

    @srv.tool()
    async def launch_application(
        command: Annotated[
            str, Field(description='The program and its arguments, e.g. "mousepad notes.txt".')
        ],
        wait_seconds: Annotated[
            float, Field(description="How long to wait for the application's window to appear.", ge=0)
        ] = 10.0,
    ) -> dict[str, Any]:
        """Start an application and wait for its window.

        Returns {"pid", "window": {"name", "type", "process_id"} or null, "message"}; call
        get_desktop_app_info afterwards for the ids to select it with.
        """
        if not command.strip():
            raise McpToolError("Application command cannot be empty.")
        # Off the loop: the first call reads the system's .desktop entries.
        refusal = await asyncio.to_thread(launch_refusal, command, state.shell)
        if refusal is not None:
            raise McpToolError(f"Refused to launch {command!r}: {refusal}.")
        try:
            before = {w.id for w in await state.backend.list_windows()}
            pid = await state.backend.launch(command)
        except ACTION_ERRORS as exc:
            raise McpToolError(f"Failed to launch application: {describe(exc)}") from None
        window = await _wait_for_window(state, pid, before, min(wait_seconds, MAX_LAUNCH_WAIT))
        if window is None:
            message = f"Started {command!r} (pid {pid}); no new window appeared within {wait_seconds:g}s."
            return {"pid": pid, "window": None, "message": message}
        message = f"Started {command!r} (pid {pid}); its window is '{window.name}'."
        found = {"name": window.name, "type": window.control_type, "process_id": window.process_id}
        return {"pid": pid, "window": found, "message": message}

    @srv.tool()
    async def close_application_window(
        id: Annotated[str, Field(description="The annotated id of the window, from get_desktop_app_info.")],
        name: Annotated[str, Field(description="The name of the window with that id.")],
    ) -> str:
        """Close an application window (the application may ask to save first)."""
        window = lookup_window(state, id, "close_application_window")
        try:
            await state.backend.close_window(window.id)
        except ACTION_ERRORS as exc:
            raise McpToolError(f"Failed to close window '{window.name}': {describe(exc)}") from None
        if state.selected_app_window is not None and state.selected_app_window.id == window.id:
            state.clear_selection()
        del state.last_app_windows[str(id)]
        warning = (
            f" Warning: window id '{id}' is named '{window.name}', not '{name}'."
            if name != window.name
            else ""
        )
        return f"Closed window '{window.name}' (id '{id}').{warning}"

    return srv
