"""MobileDataCollector ("Mobile Data Collector MCP Server"): the MobileAgent's data-collection tools.

The framework calls these tools each step; the model never sees them (spec C §12, §13.9).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from pydantic import Field

from starweave.tools.mobile.adb import AdbError
from starweave.tools.servers.mobile.state import MobileServerState

DATA_COLLECTOR_NAME = "Mobile Data Collector MCP Server"
APP_KIND = "third_party_agent"  # TargetKind.THIRD_PARTY_AGENT, the reference's kind for apps


def png_data_url(png: bytes) -> str:
    """``png`` as a ``data:image/png;base64,...`` URL."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _battery(fields: dict[str, str]) -> tuple[str, str]:
    return fields.get("level", "unknown"), fields.get("status", "unknown")


async def read_device_info(state: MobileServerState) -> dict[str, Any]:
    """model, android_version, sdk_version, screen_size, screen_density, battery_level, battery_status."""
    adb = state.adb
    level, status = _battery(await adb.dumpsys_battery())
    return {
        "model": await adb.getprop("ro.product.model"),
        "android_version": await adb.getprop("ro.build.version.release"),
        "sdk_version": await adb.getprop("ro.build.version.sdk"),
        "screen_size": await adb.wm_size(),
        "screen_density": await adb.wm_density(),
        "battery_level": level,
        "battery_status": status,
    }


async def list_apps(
    state: MobileServerState,
    name_filter: str = "",
    include_system_apps: bool = False,
    force_refresh: bool = False,
) -> list[str]:
    """Installed packages; only the unfiltered user-app list is cached (5 min), as the reference does."""
    cacheable = not name_filter and not include_system_apps
    now = state.clock()
    cached = state.apps.fresh(now) if cacheable and not force_refresh else None
    if cached is not None:
        packages = cached
    else:
        packages = await state.adb.list_packages(third_party_only=not include_system_apps)
        if cacheable:
            state.apps.put(packages, now)
    if name_filter:
        needle = name_filter.lower()
        packages = [p for p in packages if needle in p.lower()]
    return packages


def create_data_collector_server(state: MobileServerState) -> MCPServer:
    """Build MobileDataCollector on ``state`` (shared with the MobileExecutor of the same device)."""
    srv = MCPServer(DATA_COLLECTOR_NAME, log_level="WARNING")

    @srv.tool()
    async def capture_screenshot() -> str:
        """The device screen as ``"data:image/png;base64,..."``; raises when it cannot be taken."""
        try:
            png = await state.adb.screencap_png()
        except AdbError as exc:
            raise McpToolError(f"Failed to capture screenshot: {exc}") from None
        # A multi-MB PNG: encoded off the event loop.
        return await asyncio.to_thread(png_data_url, png)

    @srv.tool()
    async def get_ui_tree() -> dict[str, Any]:
        """The screen's uiautomator hierarchy: {"success": true, "ui_tree": xml, "format": "xml"}."""
        try:
            return {"success": True, "ui_tree": await state.read_ui_tree(), "format": "xml"}
        except AdbError as exc:
            return {"success": False, "error": str(exc)}

    @srv.tool()
    async def get_device_info() -> dict[str, Any]:
        """Model, Android version, SDK, screen size and density, battery (cached 60 s)."""
        now = state.clock()
        cached = state.device_info.fresh(now)
        if cached is not None:
            return {"success": True, "device_info": cached, "from_cache": True}
        try:
            info = state.device_info.put(await read_device_info(state), now)
        except AdbError as exc:
            return {"success": False, "error": str(exc)}
        return {"success": True, "device_info": info, "from_cache": False}

    @srv.tool()
    async def get_device_state() -> dict[str, Any]:
        """Whether adb reaches the phone: {"success": true, "state": s}, s as ``adb devices`` lists
        it ("device" when usable, "offline", "unauthorized"), or "absent" (not listed), "several"
        (no serial given and several attached), "no_adb" (adb cannot start)."""
        try:
            return {"success": True, "state": await state.adb.device_state()}
        except AdbError as exc:
            return {"success": False, "error": str(exc)}

    @srv.tool()
    async def get_mobile_app_target_info(
        filter: Annotated[
            str, Field(description="Keep packages containing this text (case-insensitive).")
        ] = "",
        include_system_apps: Annotated[bool, Field(description="List system packages too.")] = False,
        force_refresh: Annotated[bool, Field(description="Ignore the 5-minute app cache.")] = False,
    ) -> list[dict[str, Any]]:
        """Installed apps as TargetInfo {kind: "third_party_agent", id "1".., name = type = package}."""
        try:
            packages = await list_apps(state, filter, include_system_apps, force_refresh)
        except AdbError as exc:
            raise McpToolError(f"Failed to list apps: {exc}") from None
        state.last_apps = {str(i): p for i, p in enumerate(packages, start=1)}
        return [{"kind": APP_KIND, "id": i, "name": p, "type": p} for i, p in state.last_apps.items()]

    @srv.tool()
    async def get_app_window_controls_target_info(
        force_refresh: Annotated[bool, Field(description="Ignore the 5-second control cache.")] = False,
    ) -> list[dict[str, Any]]:
        """The screen's controls as TargetInfo {kind: "control", id "1".., name, type, rect [l,t,r,b]};
        ``dangerous`` names the word (send, delete, pay...) of a control whose action needs CONFIRM."""
        try:
            controls = await state.read_controls(force_refresh)
        except AdbError as exc:
            raise McpToolError(f"Failed to read the screen's controls: {exc}") from None
        return [c.target_info() for c in controls]

    return srv
