"""ComputerManager: caching, sub-type lookup, errors and the reset cascade."""

from __future__ import annotations

import pytest

from starweave.commands import Command
from starweave.errors import ToolError
from starweave.tools import ComputerManager


async def test_computers_are_cached_per_context(computer_manager: ComputerManager) -> None:
    first = await computer_manager.get_or_create("LinuxAgent")
    assert await computer_manager.get_or_create("LinuxAgent") is first
    other = await computer_manager.get_or_create("LinuxAgent", "counter.exe")
    assert other is not first
    assert set(computer_manager.computers) == {"LinuxAgent::None::None", "LinuxAgent::counter.exe::None"}
    assert first.tool_timeout == 2  # the manager's timeout reaches its Computers


async def test_sub_type_lookup_falls_back_to_default(computer_manager: ComputerManager) -> None:
    by_process = await computer_manager.get_or_create("LinuxAgent", "counter.exe")
    assert by_process.get_tool("action", "count") is not None
    by_root = await computer_manager.get_or_create("LinuxAgent", "Untitled - Counter", "counter.exe")
    assert by_root.get_tool("action", "count") is not None
    fallback = await computer_manager.get_or_create("LinuxAgent", "firefox")
    assert fallback.get_tool("action", "count") is None
    assert fallback.get_tool("data_collection", "snapshot") is not None


async def test_unknown_agent_lists_configured_agents(computer_manager: ComputerManager) -> None:
    with pytest.raises(ToolError) as info:
        await computer_manager.get_or_create("MobileAgent")
    assert "No MCP servers are configured for agent 'MobileAgent'" in str(info.value)
    assert "['BrokenAgent', 'LinuxAgent', 'NoDefaultAgent']" in str(info.value)


async def test_agent_without_default_entry(computer_manager: ComputerManager) -> None:
    with pytest.raises(ToolError, match=r"no 'default' entry; configured sub-types: \['only.exe'\]"):
        await computer_manager.get_or_create("NoDefaultAgent", "other.exe")
    assert (await computer_manager.get_or_create("NoDefaultAgent", "only.exe")).get_tool("action", "run")


async def test_failed_computer_is_not_cached(computer_manager: ComputerManager) -> None:
    for _ in range(2):
        with pytest.raises(ToolError, match="also offered by server 'Shell'"):
            await computer_manager.get_or_create("BrokenAgent")
    assert computer_manager.computers == {}


async def test_reset_rebuilds_computers_and_restarts_reset_servers(computer_manager: ComputerManager) -> None:
    computer = await computer_manager.get_or_create("LinuxAgent", "counter.exe")
    count = computer.command2tool(Command(tool_name="count", tool_type="action"))
    await computer.run_actions([count, count])
    shell = computer.servers["action"]["Shell"]
    await computer_manager.reset()
    assert computer_manager.computers == {}
    rebuilt = await computer_manager.get_or_create("LinuxAgent", "counter.exe")
    assert rebuilt is not computer
    assert rebuilt.servers["action"]["Shell"] is shell and shell.started  # shared session survives
    [result] = await rebuilt.run_actions(
        [rebuilt.command2tool(Command(tool_name="count", tool_type="action"))]
    )
    assert result.structured_content == {"result": 1}


async def test_aclose_closes_sessions(computer_manager: ComputerManager) -> None:
    computer = await computer_manager.get_or_create("LinuxAgent")
    shell = computer.servers["action"]["Shell"]
    await computer_manager.aclose()
    assert not shell.started
    assert computer_manager.server_manager.servers == {}
