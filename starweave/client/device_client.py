"""DeviceClient (the reference's UFOClient, spec A §6.3): executes a server's COMMANDs on this device."""

from __future__ import annotations

import asyncio
import logging
import platform as _platform

from starweave.aip.messages import Command, Result, ResultStatus, ServerMessage
from starweave.errors import InvalidArgumentError
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager

__all__ = ["DeviceClient"]

log = logging.getLogger("starweave.client")


def _checked(value: str | None, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string or None.")
    return value


class DeviceClient:
    """Holds the device's tool stack and the context (session, agent, process, root) of the task.

    ``task_lock`` serialises task starts and command execution: one task at a time, and the
    commands of a session in order.
    """

    def __init__(
        self,
        mcp_server_manager: MCPServerManager,
        computer_manager: ComputerManager,
        client_id: str = "client_001",
        platform: str | None = None,
    ) -> None:
        self.mcp_server_manager = mcp_server_manager
        self.computer_manager = computer_manager
        self.command_router = CommandRouter(computer_manager)
        self.client_id = client_id
        self.platform = platform or _platform.system().lower() or "unknown"
        self.task_lock = asyncio.Lock()
        self._session_id: str | None = None
        self._agent_name: str | None = None
        self._process_name: str | None = None
        self._root_name: str | None = None
        log.info("Device client initialized for platform: %s", self.platform)

    @property
    def session_id(self) -> str | None:
        """The session of the running task."""
        return self._session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self._session_id = _checked(value, "Session ID")
        log.info("Session ID set to: %s", value)

    @property
    def agent_name(self) -> str | None:
        """The agent whose commands run now (selects the Computer)."""
        return self._agent_name

    @agent_name.setter
    def agent_name(self, value: str | None) -> None:
        self._agent_name = _checked(value, "Agent name")
        log.info("Agent name set to: %s", value)

    @property
    def process_name(self) -> str | None:
        """The application process the commands target."""
        return self._process_name

    @process_name.setter
    def process_name(self, value: str | None) -> None:
        self._process_name = _checked(value, "Process name")
        log.info("Process name set to: %s", value)

    @property
    def root_name(self) -> str | None:
        """The root (default) context name."""
        return self._root_name

    @root_name.setter
    def root_name(self, value: str | None) -> None:
        self._root_name = _checked(value, "Root name")
        log.info("Root name set to: %s", value)

    async def execute_step(self, server_message: ServerMessage) -> list[Result]:
        """Take the context from a COMMAND message and run its actions; one Result per action."""
        self.agent_name = server_message.agent_name
        self.process_name = server_message.process_name
        self.root_name = server_message.root_name
        return await self.execute_actions(server_message.actions or [])

    async def execute_actions(self, commands: list[Command]) -> list[Result]:
        """Run ``commands`` in order through the CommandRouter (tool failures become Results)."""
        if not commands:
            return []
        log.info("Executing %d actions in total", len(commands))
        if self._agent_name is None:
            # The router needs an agent to pick the tool set; a COMMAND without one is the server's bug.
            error = "the COMMAND message names no agent_name, so no tool set can be chosen"
            return [Result(status=ResultStatus.FAILURE, error=error, call_id=c.call_id) for c in commands]
        return await self.command_router.execute(
            self._agent_name, self._process_name, self._root_name, commands
        )

    async def reset(self) -> None:
        """Forget the task context and reset the tool stack (servers marked ``reset`` restart)."""
        self._session_id = None
        self._agent_name = None
        self._process_name = None
        self._root_name = None
        await self.computer_manager.reset()
        await self.mcp_server_manager.reset()
        log.info("Client state has been reset.")

    async def aclose(self) -> None:
        """Close every Computer and MCP session."""
        await self.computer_manager.aclose()
