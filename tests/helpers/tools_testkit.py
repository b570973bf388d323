"""Small in-process MCP servers the tools tests share (imported as ``helpers.tools_testkit``)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from starweave.config.models import McpServerConfig, ShellConfig


def shell_server(shell: ShellConfig) -> MCPServer:
    """Action tools: results of every shape the router must convert."""
    srv = MCPServer("Shell", log_level="WARNING")

    @srv.tool()
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @srv.tool()
    async def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    @srv.tool()
    async def run(command: str, tags: list[str] | None = None) -> dict[str, Any]:
        """Pretend to run a command; 'fail' fails, anything else succeeds."""
        ok = command != "fail"
        return {
            "success": ok,
            "stdout": f"ran {command} in {shell.workspace}",
            "stderr": "" if ok else "command failed",
            "exit_code": 0 if ok else 1,
        }

    @srv.tool()
    async def sleep(seconds: float) -> str:
        """Sleep, then say so."""
        await asyncio.sleep(seconds)
        return "slept"

    @srv.tool()
    async def explode() -> str:
        """Always fails with a tool error."""
        raise McpToolError("exploded on purpose")

    return srv


def collector_server(shell: ShellConfig) -> MCPServer:
    """Data-collection tools; ``echo`` also exists as an action tool (allowed across types)."""
    srv = MCPServer("Collector", log_level="WARNING")

    @srv.tool()
    async def snapshot() -> dict[str, Any]:
        """Read-only state."""
        return {"workspace": shell.workspace, "files": 3}

    @srv.tool()
    async def echo(text: str) -> str:
        """Data-collection echo."""
        return f"collected {text}"

    return srv


def duplicate_server(shell: ShellConfig) -> MCPServer:
    """Offers ``echo`` again, to collide with the Shell server."""
    srv = MCPServer("Dup", log_level="WARNING")

    @srv.tool()
    async def echo(text: str) -> str:
        """Another echo."""
        return text

    return srv


def counter_server(shell: ShellConfig) -> MCPServer:
    """Stateful: each new instance counts from 1, so a restart is observable."""
    srv = MCPServer("Counter", log_level="WARNING")
    state = {"n": 0}

    @srv.tool()
    async def count() -> int:
        """Increment and return the counter."""
        state["n"] += 1
        return state["n"]

    return srv


def local(namespace: str, reset: bool = False) -> McpServerConfig:
    return McpServerConfig(namespace=namespace, type="local", reset=reset)
