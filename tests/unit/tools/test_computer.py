"""Computer: registration, the meta tool, lookup, execution, timeouts and hot add/remove."""

from __future__ import annotations

import json

import pytest
from helpers.tools_testkit import local

from starweave.commands import Command
from starweave.config.models import McpServerConfig
from starweave.errors import ToolError
from starweave.tools import Computer, MCPServerManager, make_tool_key


async def make_computer(
    manager: MCPServerManager,
    data: list[McpServerConfig] | None = None,
    action: list[McpServerConfig] | None = None,
    tool_timeout: float = 5,
    process: str | None = None,
) -> Computer:
    computer = Computer("LinuxAgent", process, manager, data or [], action or [], tool_timeout=tool_timeout)
    await computer.async_init()
    return computer


def texts(result: object) -> str:
    return "\n".join(block.text for block in result.content)  # type: ignore[attr-defined]


async def test_registers_tools_by_type(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, [local("Collector")], [local("Shell")])
    assert computer.get_tool("action", "run") is not None
    assert computer.get_tool("data_collection", "snapshot") is not None
    assert computer.get_tool("action", "snapshot") is None
    # The same name under both tool types is allowed: different keys.
    action_echo = computer.get_tool("action", "echo")
    data_echo = computer.get_tool("data_collection", "echo")
    assert action_echo is not None and data_echo is not None
    assert (action_echo.namespace, data_echo.namespace) == ("Shell", "Collector")
    assert action_echo.tool_key == make_tool_key("action", "echo") == "action::echo"
    assert action_echo.input_schema["required"] == ["text"]
    assert set(computer.servers["action"]) == {"Shell"}


async def test_action_tools_hide_data_collection_and_meta(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, [local("Collector")], [local("Shell")])
    tools = computer.action_tools()
    names = {tool["tool_name"] for tool in tools}
    assert names == {"echo", "add", "run", "sleep", "explode"}
    assert all(tool["tool_type"] == "action" and tool["namespace"] == "Shell" for tool in tools)
    assert "snapshot" not in names and "list_tools" not in names
    assert next(t for t in tools if t["tool_name"] == "add")["description"] == "Add two integers."


async def test_list_tools_meta_tool(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, [local("Collector")], [local("Shell")])
    listed = json.loads(texts(computer.list_tools(tool_type="data_collection")))
    assert {t["tool_name"] for t in listed} == {"snapshot", "echo"}
    everything = json.loads(texts(computer.list_tools(remove_meta=False)))
    assert {"action::list_tools", "data_collection::list_tools"} <= {t["tool_key"] for t in everything}
    # Callable as a tool of either type; it lists the caller's tool type unless told otherwise.
    for tool_type in ("action", "data_collection"):
        call = computer.command2tool(Command(tool_name="list_tools", tool_type=tool_type, parameters={}))
        [result] = await computer.run_actions([call])
        assert not result.is_error
        assert {t["tool_type"] for t in json.loads(texts(result))} == {tool_type}
    params = {"tool_type": None, "namespace": "Collector"}
    call = computer.command2tool(Command(tool_name="list_tools", tool_type="action", parameters=params))
    [result] = await computer.run_actions([call])
    assert {t["tool_key"] for t in json.loads(texts(result))} == {
        "data_collection::snapshot",
        "data_collection::echo",
    }
    [bad] = await computer.run_actions(
        [computer.command2tool(Command(tool_name="list_tools", tool_type="action", parameters={"kind": "x"}))]
    )
    assert bad.is_error and "unknown arguments ['kind']" in texts(bad)


async def test_command2tool_carries_parameters_and_autodetects_type(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, [local("Collector")], [local("Shell")])
    call = computer.command2tool(Command(tool_name="add", tool_type="action", parameters={"a": 1}))
    assert call.parameters == {"a": 1} and call.tool_key == "action::add"
    assert computer.get_tool("action", "add").parameters is None  # the registry entry is not mutated
    untyped = Command.model_construct(tool_name="snapshot", parameters=None, tool_type=None, call_id=None)
    assert computer.command2tool(untyped).tool_type == "data_collection"
    both = Command.model_construct(tool_name="echo", parameters={"text": "x"}, tool_type=None, call_id=None)
    assert computer.command2tool(both).tool_type == "action"  # action wins when the name is in both


async def test_command2tool_missing_tool_lists_action_tools(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, [local("Collector")], [local("Shell")])
    with pytest.raises(ToolError) as info:
        computer.command2tool(Command(tool_name="click_input", tool_type="action"))
    message = str(info.value)
    assert "No action tool named 'click_input'" in message
    assert "available action tools: ['add', 'echo', 'explode', 'run', 'sleep']" in message
    with pytest.raises(ToolError, match="it exists as a data_collection tool"):
        computer.command2tool(Command(tool_name="snapshot", tool_type="action"))


async def test_run_actions_in_order(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, action=[local("Shell")])
    calls = [
        computer.command2tool(Command(tool_name="add", tool_type="action", parameters={"a": 2, "b": 3})),
        computer.command2tool(Command(tool_name="echo", tool_type="action", parameters={"text": "hi"})),
        computer.command2tool(Command(tool_name="explode", tool_type="action")),
    ]
    results = await computer.run_actions(calls)
    assert [r.is_error for r in results] == [False, False, True]
    assert results[0].structured_content == {"result": 5}
    assert texts(results[1]) == "hi"
    assert "exploded on purpose" in texts(results[2])


async def test_timeout_returns_error_result_promptly(server_manager: MCPServerManager) -> None:
    import time

    computer = await make_computer(server_manager, action=[local("Shell")], tool_timeout=0.2)
    call = computer.command2tool(Command(tool_name="sleep", tool_type="action", parameters={"seconds": 5}))
    started = time.perf_counter()
    [result] = await computer.run_actions([call])
    assert time.perf_counter() - started < 2
    assert result.is_error and texts(result) == "Tool execution timed out after 0.2s"
    # The session is still usable after an abandoned call.
    echo = computer.command2tool(Command(tool_name="echo", tool_type="action", parameters={"text": "ok"}))
    [after] = await computer.run_actions([echo])
    assert texts(after) == "ok"


async def test_duplicate_tool_names_in_one_type_are_refused(server_manager: MCPServerManager) -> None:
    computer = Computer("BrokenAgent", None, server_manager, [], [local("Shell"), local("Dup")])
    with pytest.raises(ToolError) as info:
        await computer.async_init()
    message = str(info.value)
    assert "action tool 'echo' of server 'Dup' is also offered by server 'Shell'" in message
    assert computer.tools() == [] and computer.servers["action"] == {}  # nothing half-registered


async def test_server_that_fails_to_start_is_reported(server_manager: MCPServerManager) -> None:
    computer = Computer("LinuxAgent", None, server_manager, [], [local("Shell"), local("Ghost")])
    with pytest.raises(ToolError, match="Computer 'LinuxAgent': No MCP server found for name 'Ghost'"):
        await computer.async_init()


async def test_add_and_delete_server(server_manager: MCPServerManager) -> None:
    computer = await make_computer(server_manager, action=[local("Shell")])
    await computer.add_server("Counter", local("Counter"), "action")
    assert computer.get_tool("action", "count") is not None
    with pytest.raises(ToolError, match="also offered by server 'Shell'"):
        await computer.add_server("Dup", local("Dup"), "action")
    assert computer.get_tool("action", "echo").namespace == "Shell"  # nothing was overwritten
    await computer.delete_server("Counter", "action")
    assert computer.get_tool("action", "count") is None
    with pytest.raises(ToolError, match="has no action server 'Counter'"):
        await computer.delete_server("Counter", "action")
    # A handle can be added directly too.
    handle = await server_manager.get_or_create(local("Collector"))
    await computer.add_server("Collector", handle, "data_collection")
    assert computer.get_tool("data_collection", "snapshot") is not None


async def test_reset_restarts_reset_servers_only(server_manager: MCPServerManager) -> None:
    computer = await make_computer(
        server_manager, action=[local("Shell"), local("Counter", reset=True)], process="counter.exe"
    )
    count = computer.command2tool(Command(tool_name="count", tool_type="action"))
    await computer.run_actions([count, count])
    shell_before = computer.servers["action"]["Shell"]
    await computer.reset()
    assert computer.servers["action"]["Shell"] is shell_before  # shared server kept its session
    [result] = await computer.run_actions(
        [computer.command2tool(Command(tool_name="count", tool_type="action"))]
    )
    assert result.structured_content == {"result": 1}
