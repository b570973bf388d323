"""Protocols over the in-memory transport: routing, middleware order, registration, task flow."""

from __future__ import annotations

import asyncio
import json

import pytest

from starweave.aip import builders
from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ClientType,
    Command,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
)
from starweave.aip.protocols import (
    AIPProtocol,
    DeviceInfoProtocol,
    HeartbeatProtocol,
    Message,
    ProtocolMiddleware,
    RegistrationProtocol,
)
from starweave.aip.transport import memory_transport_pair
from starweave.errors import AIPError


class Tagger(ProtocolMiddleware):
    """Appends its name to ``metadata.trail`` in both directions and records the call order."""

    def __init__(self, name: str, calls: list[str]) -> None:
        self.name = name
        self.calls = calls

    async def process_outgoing(self, message: Message) -> Message:
        self.calls.append(f"out:{self.name}")
        if isinstance(message, ClientMessage):
            meta = dict(message.metadata or {})
            meta["trail"] = [*meta.get("trail", []), self.name]
            return message.model_copy(update={"metadata": meta})
        return message

    async def process_incoming(self, message: Message) -> Message:
        self.calls.append(f"in:{self.name}")
        return message


async def test_outgoing_middleware_runs_in_order_and_incoming_in_reverse() -> None:
    a, b = memory_transport_pair()
    calls: list[str] = []
    sender, receiver = AIPProtocol(a), AIPProtocol(b)
    for name in ("first", "second", "third"):
        sender.add_middleware(Tagger(name, calls))
        receiver.add_middleware(Tagger(name, calls))
    await sender.send_message(ClientMessage(type=ClientMessageType.HEARTBEAT, client_id="d1"))
    received = await receiver.receive_message(ClientMessage)
    assert calls == ["out:first", "out:second", "out:third", "in:third", "in:second", "in:first"]
    assert received.metadata == {"trail": ["first", "second", "third"]}


async def test_frames_are_json_with_lowercase_values_and_no_nulls() -> None:
    a, b = memory_transport_pair()
    await HeartbeatProtocol(a).send_heartbeat("dev-1")
    frame = json.loads(await b.receive())
    assert frame["type"] == "heartbeat" and frame["status"] == "ok" and frame["client_id"] == "dev-1"
    assert None not in frame.values()


async def test_receive_rejects_a_malformed_frame_with_aip_error() -> None:
    a, b = memory_transport_pair()
    await a.send(b'{"type": "command", "session_id": "s"}')
    with pytest.raises(AIPError, match="lacks"):
        await AIPProtocol(b).receive_message(ServerMessage)
    await a.send(b"not json")
    with pytest.raises(AIPError):
        await AIPProtocol(b).receive_message(ServerMessage)


async def _answer_registration(server: AIPProtocol, reply: ServerMessage | None) -> ClientMessage:
    request = await server.receive_message(ClientMessage)
    if reply is not None:
        await server.send_message(reply)
    return request


async def test_register_as_device_succeeds_on_heartbeat_ok() -> None:
    a, b = memory_transport_pair()
    client, server = RegistrationProtocol(a), RegistrationProtocol(b)

    async def serve() -> ClientMessage:
        request = await server.receive_message(ClientMessage)
        await server.send_message(builders.heartbeat_ack())
        return request

    serving = asyncio.create_task(serve())
    ok = await client.register_as_device("dev-1", {"system_info": {"cpu_count": 2}}, platform="linux")
    request = await serving
    assert ok is True and client.last_error is None
    assert request.type == ClientMessageType.REGISTER and request.client_type == ClientType.DEVICE
    assert request.client_id == "dev-1"
    assert request.metadata == {"system_info": {"cpu_count": 2}, "platform": "linux"}
    assert request.timestamp


async def test_register_as_device_fails_on_error_with_the_reason() -> None:
    a, b = memory_transport_pair()
    client, server = RegistrationProtocol(a), RegistrationProtocol(b)

    async def serve() -> None:
        await server.receive_message(ClientMessage)
        await server.send_message(builders.error_message("Client ID already exists"))

    serving = asyncio.create_task(serve())
    assert await client.register_as_device("dev-1", {}, platform="linux") is False
    await serving
    assert client.last_error == "Client ID already exists"


async def test_registration_skips_noise_then_times_out_with_a_reason() -> None:
    a, b = memory_transport_pair()
    client = RegistrationProtocol(a)
    await b.send(b"garbage")
    await AIPProtocol(b).send_message(builders.task_end("s0", TaskStatus.COMPLETED))
    assert await client.register_as_device("dev-1", timeout=0.2) is False
    assert "did not answer" in (client.last_error or "")


async def test_register_as_constellation_needs_a_target() -> None:
    a, b = memory_transport_pair()
    client, server = RegistrationProtocol(a), RegistrationProtocol(b)
    with pytest.raises(ValueError, match="target"):
        await client.register_as_constellation("c1", "")

    async def serve() -> ClientMessage:
        request = await server.receive_message(ClientMessage)
        await server.send_message(builders.heartbeat_ack("r1"))
        return request

    serving = asyncio.create_task(serve())
    assert await client.register_as_constellation("c1", "dev-1") is True
    request = await serving
    assert request.client_type == ClientType.CONSTELLATION and request.target_id == "dev-1"


async def test_server_task_flow_messages() -> None:
    a, b = memory_transport_pair()
    server, client = AIPProtocol(a), AIPProtocol(b)
    actions = [Command(tool_name="execute_command", parameters={"command": "ls"}, tool_type="action")]
    sent = builders.command_message(actions, "s1", agent_name="LinuxAgent")
    await server.send_message(sent)
    response_id = sent.response_id
    command = await client.receive_message(ServerMessage)
    assert command.type == ServerMessageType.COMMAND and command.response_id == response_id
    assert command.status == TaskStatus.CONTINUE and command.actions == actions
    await server.send_message(builders.task_end("s1", TaskStatus.FAILED, error="boom"))
    end = await client.receive_message(ServerMessage)
    assert (end.type, end.status, end.error) == ("task_end", "failed", "boom")


async def test_device_info_request_and_response() -> None:
    a, b = memory_transport_pair()
    constellation, server = DeviceInfoProtocol(a), DeviceInfoProtocol(b)
    request_id = await constellation.request_device_info("c1", "dev-1")
    request = await server.receive_message(ClientMessage)
    assert request.request_id == request_id and request.target_id == "dev-1"
    await server.send_message(builders.device_info_response({"os": "linux"}, request_id))
    response = await constellation.receive_message(ServerMessage)
    assert response.result == {"os": "linux"} and response.status == TaskStatus.OK
    await server.send_message(builders.device_info_response(None, request_id, error="unknown device"))
    failed = await constellation.receive_message(ServerMessage)
    assert failed.status == TaskStatus.ERROR and failed.error == "unknown device"


async def test_an_error_message_and_is_connected() -> None:
    a, b = memory_transport_pair()
    protocol = AIPProtocol(a)
    assert protocol.is_connected()
    await protocol.send_message(builders.error_message("bad message", response_id="r1"))
    error = await AIPProtocol(b).receive_message(ServerMessage)
    assert (
        error.type == ServerMessageType.ERROR and error.error == "bad message" and error.response_id == "r1"
    )
    await a.close()
    assert not protocol.is_connected()
    with pytest.raises(ConnectionError):
        await protocol.send_message(builders.error_message("late"))
