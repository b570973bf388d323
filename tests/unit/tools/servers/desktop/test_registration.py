"""The desktop servers as builtin local servers: one UIState per session, shared across agents."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent

from starweave.config.models import ShellConfig, default_mcp
from starweave.tools import ComputerManager, MCPServerManager
from starweave.tools.computer import Computer
from starweave.tools.mcp_manager import default_registry
from starweave.tools.servers.desktop import shared_ui_state

from .fake_backend import FakeDesktopBackend


def _value(result: CallToolResult) -> Any:
    assert not result.is_error, result
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    if data is not None:
        return data
    return json.loads("".join(p.text for p in result.content if isinstance(p, TextContent)))


async def _call(computer: Computer, tool_type: str, name: str, args: dict[str, Any]) -> Any:
    tool = computer.get_tool(tool_type, name)
    assert tool is not None, name
    [result] = await computer.run_actions([dataclasses.replace(tool, parameters=args)])
    return _value(result)


async def test_registered_and_configured_by_default() -> None:
    for name in ("UICollector", "HostUIExecutor", "AppUIExecutor", "TextEditorExecutor"):
        assert name in default_registry
    mcp = default_mcp()
    assert [s.namespace for s in mcp["HostAgent"]["default"].action] == ["HostUIExecutor"]
    assert [s.namespace for s in mcp["AppAgent"]["mousepad"].action] == [
        "AppUIExecutor",
        "TextEditorExecutor",
    ]
    assert mcp["AppAgent"]["default"].data_collection[0].namespace == "UICollector"


async def test_host_and_app_agents_of_one_session_share_the_ui_state(tmp_path: Path) -> None:
    shell = ShellConfig(workspace=str(tmp_path))
    backend = FakeDesktopBackend()
    state = shared_ui_state(shell, backend_factory=lambda: backend)
    assert shared_ui_state(shell) is state
    assert shared_ui_state(ShellConfig(workspace=str(tmp_path))) is not state  # another session
    computers = ComputerManager(default_mcp(), MCPServerManager(shell))
    try:
        host = await computers.get_or_create("HostAgent")
        windows = await _call(host, "data_collection", "get_desktop_app_info", {})
        assert [w["name"] for w in windows] == ["Calculator", "notes.txt - Mousepad"]
        await _call(host, "action", "select_application_window", {"id": "1", "name": "Calculator"})
        app = await computers.get_or_create("AppAgent", "gnome-calculator")
        await _call(app, "data_collection", "get_app_window_controls_info", {"field_list": ["label"]})
        await _call(app, "action", "click_input", {"id": "1", "name": "7"})
        assert await _call(app, "action", "texts", {"id": "4", "name": "Display"}) == "7"
        editor = await computers.get_or_create("AppAgent", "mousepad")
        assert editor.get_tool("action", "replace_text") is not None
        assert editor.get_tool("action", "click_input") is not None
    finally:
        await computers.aclose()
