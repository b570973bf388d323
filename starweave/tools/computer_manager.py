"""ComputerManager: one Computer per (agent, process, root) context, built from ``mcp.yaml``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from starweave.config.models import McpServerSet
from starweave.errors import ToolError
from starweave.tools.computer import DEFAULT_TOOL_TIMEOUT, Computer
from starweave.tools.mcp_manager import MCPServerManager


class ComputerManager:
    """Creates and caches Computers from the ``MCP`` section (agent → sub-type → server set).

    The sub-type is looked up as the process name, then the root name, then ``default`` (the
    reference keys ``mcp.yaml`` by application, e.g. ``WINWORD.EXE``, and falls back to ``default``).
    """

    def __init__(
        self,
        mcp_config: Mapping[str, Mapping[str, McpServerSet]],
        server_manager: MCPServerManager,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        self.mcp_config = mcp_config
        self.server_manager = server_manager
        self.tool_timeout = tool_timeout
        self._computers: dict[str, Computer] = {}
        self._lock = asyncio.Lock()

    @staticmethod
    def computer_key(agent_name: str, process_name: str | None, root_name: str | None) -> str:
        """The cache key of one context."""
        return f"{agent_name}::{process_name}::{root_name}"

    def server_set(
        self, agent_name: str, process_name: str | None = None, root_name: str | None = None
    ) -> McpServerSet:
        """The server set for a context; ToolError naming what is configured when there is none."""
        entry = self.mcp_config.get(agent_name)
        if entry is None:
            raise ToolError(
                f"No MCP servers are configured for agent {agent_name!r}; "
                f"configured agents: {sorted(self.mcp_config)}. Add it to mcp.yaml."
            )
        for sub_type in (process_name, root_name, "default"):
            if sub_type and sub_type in entry:
                return entry[sub_type]
        raise ToolError(
            f"Agent {agent_name!r} has no MCP servers for process {process_name!r} and no 'default' entry; "
            f"configured sub-types: {sorted(entry)}. Add a 'default' entry to mcp.yaml."
        )

    async def get_or_create(
        self, agent_name: str, process_name: str | None = None, root_name: str | None = None
    ) -> Computer:
        """The Computer of this context, created and initialised on first use."""
        key = self.computer_key(agent_name, process_name, root_name)
        async with self._lock:
            computer = self._computers.get(key)
            if computer is None:
                servers = self.server_set(agent_name, process_name, root_name)
                computer = Computer(
                    agent_name,
                    process_name,
                    self.server_manager,
                    data_collection_servers=servers.data_collection,
                    action_servers=servers.action,
                    tool_timeout=self.tool_timeout,
                )
                await computer.async_init()
                self._computers[key] = computer
            return computer

    @property
    def computers(self) -> dict[str, Computer]:
        """The cached Computers by key (a copy)."""
        return dict(self._computers)

    async def reset(self) -> None:
        """Drop every Computer and close the servers marked ``reset: true``.

        Computers are rebuilt on next use: shared servers keep their open sessions, reset servers
        start afresh, so no state leaks from one task to the next.
        """
        async with self._lock:
            computers = list(self._computers.values())
            self._computers.clear()
            for computer in computers:
                for config in computer.server_configs():
                    if config.reset:
                        await self.server_manager.close_server(config, computer.process_name)

    async def aclose(self) -> None:
        """Drop every Computer and close every MCP session."""
        await self.reset()
        await self.server_manager.aclose()
