"""Registry, server-manager and computer-manager fixtures for the tools tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.tools_testkit import collector_server, counter_server, duplicate_server, local, shell_server

from starweave.config.models import McpServerSet, ShellConfig
from starweave.tools import ComputerManager, MCPRegistry, MCPServerManager


@pytest.fixture
def registry() -> MCPRegistry:
    reg = MCPRegistry()
    reg.register_factory("Shell", shell_server)
    reg.register_factory("Collector", collector_server)
    reg.register_factory("Dup", duplicate_server)
    reg.register_factory("Counter", counter_server)
    return reg


@pytest.fixture
def shell_config(tmp_path: Any) -> ShellConfig:
    return ShellConfig.model_validate({"workspace": str(tmp_path)})


@pytest.fixture
async def server_manager(registry: MCPRegistry, shell_config: ShellConfig) -> AsyncIterator[MCPServerManager]:
    manager = MCPServerManager(shell_config, registry=registry, startup_timeout=10)
    yield manager
    await manager.aclose()


@pytest.fixture
def mcp_config() -> dict[str, dict[str, McpServerSet]]:
    return {
        "LinuxAgent": {
            "default": McpServerSet(data_collection=[local("Collector")], action=[local("Shell")]),
            "counter.exe": McpServerSet(action=[local("Shell"), local("Counter", reset=True)]),
        },
        "BrokenAgent": {"default": McpServerSet(action=[local("Shell"), local("Dup")])},
        "NoDefaultAgent": {"only.exe": McpServerSet(action=[local("Shell")])},
    }


@pytest.fixture
async def computer_manager(
    mcp_config: dict[str, dict[str, McpServerSet]], server_manager: MCPServerManager
) -> AsyncIterator[ComputerManager]:
    manager = ComputerManager(mcp_config, server_manager, tool_timeout=2)
    yield manager
    await manager.aclose()
