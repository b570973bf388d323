"""LocalCommandDispatcher over a real CommandRouter, and over routers that fail."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from mcp.server.mcpserver import MCPServer

from starweave.commands import Command, Result, ResultStatus
from starweave.commands.local import LocalCommandDispatcher
from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.tools import CommandRouter, ComputerManager, MCPRegistry, MCPServerManager


def notes_server(shell: ShellConfig) -> MCPServer:
    srv = MCPServer("Notes", log_level="WARNING")
    notes: list[str] = []

    @srv.tool()
    async def add_note(text: str) -> int:
        """Store a note and return how many there are."""
        notes.append(text)
        return len(notes)

    return srv


@pytest.fixture
async def router() -> AsyncIterator[CommandRouter]:
    registry = MCPRegistry()
    registry.register_factory("Notes", notes_server)
    config = {
        "LinuxAgent": {"default": McpServerSet(action=[McpServerConfig(namespace="Notes", type="local")])},
        "OtherAgent": {"default": McpServerSet()},
    }
    manager = ComputerManager(config, MCPServerManager(registry=registry))
    yield CommandRouter(manager)
    await manager.aclose()


class RaisingRouter:
    async def execute(
        self,
        agent_name: str,
        process_name: str | None,
        root_name: str | None,
        commands: list[Command],
        early_exit: bool = True,
    ) -> list[Result]:
        raise ConnectionError(f"device for {agent_name} is gone")


class SlowRouter:
    async def execute(
        self,
        agent_name: str,
        process_name: str | None,
        root_name: str | None,
        commands: list[Command],
        early_exit: bool = True,
    ) -> list[Result]:
        await asyncio.sleep(30)
        return []


def note(text: str) -> Command:
    return Command(tool_name="add_note", tool_type="action", parameters={"text": text})


async def test_runs_commands_through_the_router(router: CommandRouter) -> None:
    dispatcher = LocalCommandDispatcher(router)
    cmds = [note("a"), note("b")]
    results = await dispatcher.execute_commands(cmds)
    assert [r.status for r in results] == [ResultStatus.SUCCESS, ResultStatus.SUCCESS]
    assert [r.result for r in results] == [1, 2]
    assert [r.call_id for r in results] == [c.call_id for c in cmds] and all(c.call_id for c in cmds)
    assert results[0].namespace == "Notes"


async def test_context_attributes_pick_the_computer(router: CommandRouter) -> None:
    dispatcher = LocalCommandDispatcher(router, agent_name="OtherAgent")
    [missing] = await dispatcher.execute_commands([note("a")])
    assert missing.status == ResultStatus.FAILURE and "No action tool named 'add_note'" in (
        missing.error or ""
    )
    dispatcher.agent_name = "LinuxAgent"
    dispatcher.process_name, dispatcher.root_name = "gedit", "gedit"  # falls back to 'default'
    [found] = await dispatcher.execute_commands([note("a")])
    assert found.status == ResultStatus.SUCCESS


async def test_router_raising_becomes_failures() -> None:
    results = await LocalCommandDispatcher(RaisingRouter()).execute_commands([note("a"), note("b")])
    assert [r.status for r in results] == [ResultStatus.FAILURE, ResultStatus.FAILURE]
    assert "ConnectionError: device for LinuxAgent is gone" in (results[0].error or "")
    assert (
        results[0].result
        == "ConnectionError: device for LinuxAgent is gone, please retry or execute a different command."
    )


async def test_router_timing_out_becomes_failures() -> None:
    cmds = [note("a")]
    [result] = await LocalCommandDispatcher(SlowRouter()).execute_commands(cmds, timeout=0.05)
    assert result.status == ResultStatus.FAILURE
    assert "timed out after 0.05s" in (result.error or "") and result.call_id == cmds[0].call_id
