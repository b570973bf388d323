"""Fixtures: the three UI servers over one UIState and a fake desktop, behind real MCP clients."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, TextContent

from starweave.config.models import ShellConfig
from starweave.tools.servers.desktop import (
    UIState,
    create_app_executor_server,
    create_host_executor_server,
    create_ui_collector_server,
)

from .fake_backend import FakeDesktopBackend


@dataclass
class Desktop:
    """The fake desktop, the shared state and one open client per server."""

    backend: FakeDesktopBackend
    state: UIState
    collector: Client
    host: Client
    app: Client

    async def ok(self, client: Client, tool: str, args: dict[str, Any] | None = None) -> Any:
        """Call ``tool`` and return its value; the call must succeed."""
        result = await client.call_tool(tool, args or {})
        assert not result.is_error, text_of(result)
        return value_of(result)

    async def error(self, client: Client, tool: str, args: dict[str, Any] | None = None) -> str:
        """Call ``tool`` and return its error text; the call must fail."""
        result = await client.call_tool(tool, args or {})
        assert result.is_error, value_of(result)
        return text_of(result)

    async def select(self, window_id: str = "1", name: str = "Calculator", walk: bool = True) -> None:
        """List the windows, select one and (with ``walk``) read its controls."""
        await self.ok(self.collector, "get_desktop_app_info")
        await self.ok(self.host, "select_application_window", {"id": window_id, "name": name})
        if walk:
            await self.ok(self.collector, "get_app_window_controls_info", {"field_list": ["label"]})


def text_of(result: CallToolResult) -> str:
    return "".join(part.text for part in result.content if isinstance(part, TextContent))


def value_of(result: CallToolResult) -> Any:
    """The tool's return value: structured content (unwrapped from {"result": ...}) or the text."""
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    if data is not None:
        return data
    text = text_of(result)
    try:
        return json.loads(text)
    except ValueError:
        return text


@asynccontextmanager
async def open_desktop(
    state: UIState | None = None, shell: ShellConfig | None = None
) -> AsyncIterator[Desktop]:
    """The three servers over ``state`` (default: a fresh one over a new fake desktop).

    A context manager rather than a fixture: the MCP clients' task groups must be entered and left
    by the same task, which pytest-asyncio does not guarantee for async fixtures.
    """
    backend = FakeDesktopBackend()
    state = state or UIState(backend_factory=lambda: backend, shell=shell)
    async with (
        Client(create_ui_collector_server(state)) as collector,
        Client(create_host_executor_server(state)) as host,
        Client(create_app_executor_server(state)) as app,
    ):
        yield Desktop(backend, state, collector, host, app)
