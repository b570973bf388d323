"""BasicCommandDispatcher: error results and the never-raise guarantee."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from starweave.commands import Command, Result, ResultStatus
from starweave.commands.dispatcher import BasicCommandDispatcher, ensure_call_ids


class EchoDispatcher(BasicCommandDispatcher):
    """Answers every command with SUCCESS, or misbehaves the way it is told to."""

    def __init__(self, behaviour: str = "ok") -> None:
        self.behaviour = behaviour
        self.seen: list[Command] = []

    async def _execute(self, commands: list[Command]) -> list[Result]:
        self.seen = list(commands)
        if self.behaviour == "raise":
            raise RuntimeError("transport went away")
        if self.behaviour == "hang":
            await asyncio.sleep(30)
        if self.behaviour == "short":
            return []
        return [Result(status=ResultStatus.SUCCESS, result=c.tool_name, call_id=c.call_id) for c in commands]


def commands() -> list[Command]:
    return [
        Command(tool_name="run_shell", tool_type="action", parameters={"command": "ls"}, call_id="given"),
        Command(tool_name="read_file", tool_type="action", parameters={"path": "a"}),
    ]


def test_generate_error_results_text() -> None:
    cmds = commands()
    results = BasicCommandDispatcher.generate_error_results(cmds, "boom")
    assert len(results) == 2
    for command, result in zip(cmds, results, strict=True):
        assert result.status == ResultStatus.FAILURE
        assert result.error == f"Error occurred while executing command {command}: boom"
        assert result.result == "boom, please retry or execute a different command."
        assert result.call_id == command.call_id


def test_ensure_call_ids_keeps_given_ids() -> None:
    cmds = ensure_call_ids(commands())
    assert cmds[0].call_id == "given"
    assert cmds[1].call_id is not None and uuid.UUID(cmds[1].call_id).version == 4


async def test_success_passes_results_through() -> None:
    dispatcher = EchoDispatcher()
    results = await dispatcher.execute_commands(commands())
    assert [r.result for r in results] == ["run_shell", "read_file"]
    assert all(c.call_id for c in dispatcher.seen)  # ids were assigned before dispatch
    assert results[1].call_id == dispatcher.seen[1].call_id


async def test_empty_batch() -> None:
    assert await EchoDispatcher("raise").execute_commands([]) == []


@pytest.mark.parametrize(
    ("behaviour", "fragment"),
    [
        ("raise", "RuntimeError: transport went away"),
        ("hang", "Command execution timed out after 0.1s"),
        ("short", "returned 0 results for 2 commands"),
    ],
)
async def test_failures_become_results(behaviour: str, fragment: str) -> None:
    results = await EchoDispatcher(behaviour).execute_commands(commands(), timeout=0.1)
    assert [r.status for r in results] == [ResultStatus.FAILURE, ResultStatus.FAILURE]
    assert all(fragment in (r.error or "") for r in results)
    assert results[0].call_id == "given" and results[1].call_id
