"""DeviceClient: context validation and command execution through the real CommandRouter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from starweave.aip.messages import Command, ResultStatus, ServerMessage, ServerMessageType, TaskStatus
from starweave.client.device_client import DeviceClient


def command_message(*actions: Command, agent: str | None = "LinuxAgent") -> ServerMessage:
    return ServerMessage(
        type=ServerMessageType.COMMAND,
        status=TaskStatus.CONTINUE,
        actions=list(actions),
        session_id="s1",
        response_id="r1",
        agent_name=agent,
    )


def shell(command: str, call_id: str) -> Command:
    return Command(
        tool_name="execute_command", parameters={"command": command}, tool_type="action", call_id=call_id
    )


async def test_execute_step_runs_real_tools_in_the_workspace(device: DeviceClient, workspace: Path) -> None:
    results = await device.execute_step(
        command_message(shell("echo hi > f.txt", "c1"), shell("cat f.txt", "c2"))
    )
    assert [r.status for r in results] == [ResultStatus.SUCCESS, ResultStatus.SUCCESS]
    assert [r.call_id for r in results] == ["c1", "c2"]
    assert (workspace / "f.txt").read_text() == "hi\n"
    assert results[1].result["stdout"] == "hi\n"
    assert device.agent_name == "LinuxAgent" and device.process_name is None


async def test_failures_become_results_and_later_commands_are_skipped(device: DeviceClient) -> None:
    missing = Command(tool_name="no_such_tool", tool_type="action", call_id="c1")
    results = await device.execute_step(command_message(missing, shell("echo x > y.txt", "c2")))
    assert results[0].status == ResultStatus.FAILURE and "no_such_tool" in (results[0].error or "")
    assert results[1].status == ResultStatus.SKIPPED


async def test_a_command_without_agent_name_fails_clearly(device: DeviceClient) -> None:
    results = await device.execute_step(command_message(shell("echo x", "c1"), agent=None))
    assert results[0].status == ResultStatus.FAILURE and "agent_name" in (results[0].error or "")


async def test_empty_actions_do_nothing(device: DeviceClient) -> None:
    assert await device.execute_step(command_message()) == []


@pytest.mark.parametrize("field", ["session_id", "agent_name", "process_name", "root_name"])
def test_context_setters_accept_only_strings_or_none(device: DeviceClient, field: str) -> None:
    setattr(device, field, "value")
    assert getattr(device, field) == "value"
    setattr(device, field, None)
    assert getattr(device, field) is None
    bad: Any = 42
    with pytest.raises(ValueError, match="must be a string or None"):
        setattr(device, field, bad)


async def test_reset_clears_the_context_and_tools_still_work(device: DeviceClient, workspace: Path) -> None:
    await device.execute_step(command_message(shell("echo one > a.txt", "c1")))
    device.session_id = "s1"
    await device.reset()
    assert (device.session_id, device.agent_name, device.process_name, device.root_name) == (None,) * 4
    assert device.computer_manager.computers == {}
    results = await device.execute_step(command_message(shell("echo two > b.txt", "c2")))
    assert results[0].status == ResultStatus.SUCCESS and (workspace / "b.txt").exists()


def test_defaults(device: DeviceClient) -> None:
    assert device.client_id == "dev-1" and device.platform == "linux"
    assert not device.task_lock.locked()
