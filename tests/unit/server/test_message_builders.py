"""Every server message is made by starweave.aip.builders (one wire format for all senders)."""

from __future__ import annotations

from pathlib import Path

from starweave.aip.messages import (
    Command,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    parse_server_message,
)
from starweave.aip.protocols import (
    DeviceInfoProtocol,
    HeartbeatProtocol,
    RegistrationProtocol,
    TaskExecutionProtocol,
)
from starweave.aip.transport import memory_transport_pair

SERVER_SOURCES = [
    *sorted((Path(__file__).parents[3] / "starweave" / "server").glob("*.py")),
    Path(__file__).parents[3] / "starweave" / "aip" / "protocols.py",
]


def test_no_hand_built_server_messages_in_the_server() -> None:
    offenders = [p.name for p in SERVER_SOURCES if "ServerMessage(" in p.read_text(encoding="utf-8")]
    assert offenders == []


async def test_protocol_server_helpers_send_builder_messages() -> None:
    server_end, client_end = memory_transport_pair()
    tasks = TaskExecutionProtocol(server_end)
    await RegistrationProtocol(server_end).send_registration_confirmation("r1")
    await HeartbeatProtocol(server_end).send_heartbeat_ack()
    await tasks.send_task_assignment("do it", "t1", "s1", agent_name="LinuxAgent")
    command_id = await tasks.send_commands(
        [Command(tool_name="echo", parameters={}, tool_type="action")], "s1", root_name="r"
    )
    await tasks.send_task_end("s1", TaskStatus.FAILED, result={}, error="nope", response_id="e1")
    await DeviceInfoProtocol(server_end).send_device_info_response(None, "q1", error="offline")
    await tasks.send_error("bad", response_id="x1")

    received: list[ServerMessage] = [parse_server_message(await client_end.receive()) for _ in range(7)]
    expected = [
        ServerMessageType.HEARTBEAT,
        ServerMessageType.HEARTBEAT,
        ServerMessageType.TASK,
        ServerMessageType.COMMAND,
        ServerMessageType.TASK_END,
        ServerMessageType.DEVICE_INFO_RESPONSE,
        ServerMessageType.ERROR,
    ]
    # The parser picked each message's model by its type, so each carried what its type requires.
    assert [m.type for m in received] == expected
    confirm, ack, task, command, end, info, error = received
    assert confirm.response_id == "r1" and ack.status == TaskStatus.OK and ack.response_id
    assert task.task_name == "t1" and task.agent_name == "LinuxAgent" and task.status == TaskStatus.CONTINUE
    assert command.response_id == command_id and command.root_name == "r"
    assert end.response_id == "e1" and end.error == "nope" and end.status == TaskStatus.FAILED
    assert info.status == TaskStatus.ERROR and info.request_id == "q1" and info.error == "offline"
    assert error.error == "bad" and error.response_id == "x1"
