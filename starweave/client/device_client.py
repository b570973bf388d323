"""DeviceClient (the reference's UFOClient, spec A §6.3): executes a server's COMMANDs on this device."""

from __future__ import annotations

import asyncio
import logging
import platform as _platform
from collections.abc import Awaitable, Callable
from typing import overload

from starweave.aip.messages import Command, Result, ResultStatus, ServerMessage
from starweave.client.device_info import DeviceSystemInfo
from starweave.errors import InvalidArgumentError
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager

__all__ = ["DeviceClient"]

log = logging.getLogger("starweave.client")


class _ContextName:
    """A piece of the task's context: a string or None, checked and logged on every change."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type) -> _ContextName: ...
    @overload
    def __get__(self, obj: object, owner: type) -> str | None: ...
    def __get__(self, obj: object | None, owner: type) -> _ContextName | str | None:
        if obj is None:
            return self
        value: str | None = getattr(obj, self.slot, None)
        return value

    def __set__(self, obj: object, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise InvalidArgumentError(f"{self.label} must be a string or None.")
        setattr(obj, self.slot, value)
        log.info("%s set to: %s", self.label, value)


_CONTEXT = ("session_id", "agent_name", "process_name", "root_name")


class DeviceClient:
    """Holds the device's tool stack and the context (session, agent, process, root) of the task.

    ``task_lock`` serialises task starts and command execution: one task at a time, and the
    commands of a session in order.
    """

    # The session of the running task.
    session_id = _ContextName("Session ID")
    # The agent whose commands run now (selects the Computer).
    agent_name = _ContextName("Agent name")
    # The application process the commands target.
    process_name = _ContextName("Process name")
    # The root (default) context name.
    root_name = _ContextName("Root name")

    def __init__(
        self,
        mcp_server_manager: MCPServerManager,
        computer_manager: ComputerManager,
        client_id: str = "client_001",
        platform: str | None = None,
        capabilities: list[str] | None = None,
        closers: list[Callable[[], Awaitable[None]]] | None = None,
    ) -> None:
        self.mcp_server_manager = mcp_server_manager
        self.computer_manager = computer_manager
        self.command_router = CommandRouter(computer_manager)
        self.client_id = client_id
        self.platform = platform or _platform.system().lower() or "unknown"
        # What this kind of device can do (starweave.device_kinds); None: the OS's generic features.
        self.capabilities = None if capabilities is None else list(capabilities)
        # Run by aclose after the Computers close (e.g. the desktop servers' shared backend).
        self._closers = list(closers or [])
        self.task_lock = asyncio.Lock()
        log.info("Device client initialized for platform: %s", self.platform)

    def describe(self, info: DeviceSystemInfo) -> DeviceSystemInfo:
        """``info`` as this device announces itself: its kind (``--platform``) as the platform and
        its capabilities as the supported features; the OS's name stays in ``custom_metadata``."""
        if self.capabilities is None:
            return info
        info.custom_metadata.setdefault("os_name", info.platform)
        info.platform = self.platform
        info.supported_features = list(self.capabilities)
        return info

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
        agent_name = self.agent_name
        if agent_name is None:
            # The router needs an agent to pick the tool set; a COMMAND without one is the server's bug.
            error = "the COMMAND message names no agent_name, so no tool set can be chosen"
            return [Result(status=ResultStatus.FAILURE, error=error, call_id=c.call_id) for c in commands]
        return await self.command_router.execute(agent_name, self.process_name, self.root_name, commands)

    async def reset(self) -> None:
        """Forget the task context and reset the tool stack (servers marked ``reset`` restart)."""
        for name in _CONTEXT:
            setattr(self, f"_{name}", None)  # the slots themselves: a reset is not a change to log
        await self.computer_manager.reset()
        await self.mcp_server_manager.reset()
        log.info("Client state has been reset.")

    async def aclose(self) -> None:
        """Close every Computer and MCP session, then what the servers shared."""
        await self.computer_manager.aclose()
        for close in self._closers:
            await close()
