"""The device side of the command layer: MCP servers, Computers and the CommandRouter."""

from starweave.tools.computer import Computer, MCPToolCall, make_tool_key
from starweave.tools.computer_manager import ComputerManager
from starweave.tools.mcp_manager import (
    LocalServerFactory,
    MCPRegistry,
    MCPServerHandle,
    MCPServerManager,
    default_registry,
    register_local_server,
)
from starweave.tools.router import CommandRouter, validate_arguments

__all__ = [
    "CommandRouter",
    "Computer",
    "ComputerManager",
    "LocalServerFactory",
    "MCPRegistry",
    "MCPServerHandle",
    "MCPServerManager",
    "MCPToolCall",
    "default_registry",
    "make_tool_key",
    "register_local_server",
    "validate_arguments",
]
