"""DeviceConnection over the in-memory transport: registration and every server message kind."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from unit.client.virtual_time import VirtualTime

from starweave.aip import builders
from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    Command,
    ResultStatus,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
)
from starweave.aip.protocols import AIPProtocol
from starweave.aip.transport import MemoryTransport, memory_transport_pair
from starweave.client.connection import ConnectionSettings, DeviceConnection, is_auth_refusal
from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider, DeviceSystemInfo, SystemProbe
from starweave.errors import RegistrationRefused

WAIT = 10.0  # seconds any single expected event may take
FAST_PROBE = SystemProbe(route_ip=lambda: "10.0.0.7", resolved_ip=lambda: "10.0.0.7")


class BrokenProvider(DeviceInfoProvider):
    """Collection that fails outright, as a buggy platform layer might."""

    def collect_system_info(
        self, client_id: str, custom_metadata: dict[str, Any] | None = None
    ) -> DeviceSystemInfo:
        raise RuntimeError("telemetry exploded")


class FakeServer:
    """The server end of the pair, reading ClientMessages and sending ServerMessages."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.protocol = AIPProtocol(transport)

    async def next(self) -> ClientMessage:
        return await asyncio.wait_for(self.protocol.receive_message(ClientMessage), WAIT)

    async def next_of(self, kind: ClientMessageType) -> ClientMessage:
        """The next message of ``kind``, skipping heartbeats."""
        while True:
            message = await self.next()
            if message.type == kind:
                return message
            assert message.type == ClientMessageType.HEARTBEAT, message

    async def send(self, message: ServerMessage) -> None:
        await self.protocol.send_message(message)

    async def confirm_registration(self) -> ClientMessage:
        request = await self.next()
        await self.protocol.send_message(builders.heartbeat_ack())
        return request


def make_connection(device: DeviceClient, transport: MemoryTransport, **kwargs: Any) -> DeviceConnection:
    kwargs.setdefault("info_provider", DeviceInfoProvider(FAST_PROBE))
    kwargs.setdefault("heartbeat_interval", 30.0)
    return DeviceConnection(transport, device, ConnectionSettings(**kwargs))


@pytest.fixture
async def served(
    device: DeviceClient,
) -> AsyncIterator[tuple[DeviceConnection, FakeServer, asyncio.Task[None]]]:
    """A registered connection being served, with the fake server's end."""
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    await server.confirm_registration()
    await registering
    serving = asyncio.create_task(connection.serve())
    yield connection, server, serving
    await server_end.close()
    await asyncio.wait_for(serving, 10)


def task_message(session_id: str, request: str = "make a file", task_name: str = "t1") -> ServerMessage:
    return ServerMessage(
        type=ServerMessageType.TASK, user_request=request, task_name=task_name, session_id=session_id
    )


def command(
    session_id: str, response_id: str, line: str, status: TaskStatus = TaskStatus.CONTINUE
) -> ServerMessage:
    action = Command(
        tool_name="execute_command", parameters={"command": line}, tool_type="action", call_id="c1"
    )
    return ServerMessage(
        type=ServerMessageType.COMMAND,
        status=status,
        actions=[action],
        session_id=session_id,
        response_id=response_id,
        agent_name="LinuxAgent",
    )


async def test_register_sends_platform_system_info_and_time(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    request = await server.confirm_registration()
    await registering
    assert connection.state.registered
    assert request.type == ClientMessageType.REGISTER and request.client_id == "dev-1"
    meta = request.metadata or {}
    assert meta["platform"] == "linux" and meta["registration_time"]
    assert meta["system_info"]["device_id"] == "dev-1" and meta["system_info"]["ip_address"] == "10.0.0.7"


async def test_register_without_device_info_sends_the_time_only(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    connection = make_connection(device, client_end, info_provider=BrokenProvider())
    registering = asyncio.create_task(connection.register())
    request = await server.confirm_registration()
    await registering
    # The REGISTER always carries the platform, which the server needs to route the device.
    # (request_device_token: issue 11's per-device credentials, ignored by reference servers.)
    assert set((request.metadata or {}).keys()) == {"registration_time", "platform", "request_device_token"}


@pytest.mark.parametrize(
    ("error", "fatal"),
    [("Client ID already exists", False), ("Invalid API token", True), ("Unauthorized", True)],
)
async def test_refused_registration_says_what_the_server_said(
    device: DeviceClient, error: str, fatal: bool
) -> None:
    client_end, server_end = memory_transport_pair()
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    server = FakeServer(server_end)
    await server.next()
    await AIPProtocol(server_end).send_message(builders.error_message(error))
    with pytest.raises(RegistrationRefused) as info:
        await registering
    assert error in info.value.reason and "dev-1" in info.value.reason
    assert info.value.fatal is fatal
    assert not connection.state.registered


async def test_close_1008_during_registration_is_a_fatal_refusal(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    await FakeServer(server_end).next()
    await server_end.close(1008, "invalid API key")
    with pytest.raises(RegistrationRefused, match="1008: invalid API key") as info:
        await registering
    assert info.value.fatal


async def test_a_plain_close_during_registration_is_a_connection_error(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    await FakeServer(server_end).next()
    await server_end.close(1001, "going away")
    with pytest.raises(ConnectionError):
        await registering


def test_auth_refusal_detection() -> None:
    assert is_auth_refusal("Invalid token") and is_auth_refusal("missing X-API-Key: api key required")
    assert not is_auth_refusal("Client ID already exists") and not is_auth_refusal("Platform mismatch")


async def test_task_is_confirmed_with_a_client_task_message(
    served: tuple[DeviceConnection, FakeServer, asyncio.Task[None]],
) -> None:
    connection, server, _ = served
    await server.send(task_message("s1", request="write hello", task_name="greet"))
    confirm = await server.next_of(ClientMessageType.TASK)
    assert (confirm.request, confirm.task_name, confirm.session_id, confirm.client_id) == (
        "write hello",
        "greet",
        "s1",
        "dev-1",
    )
    assert confirm.metadata == {"platform": "linux"}
    assert connection.state.current_session_id == "s1" and connection.device_client.session_id == "s1"


async def test_a_second_task_while_one_runs_is_ignored(
    served: tuple[DeviceConnection, FakeServer, asyncio.Task[None]],
) -> None:
    connection, server, _ = served
    await server.send(task_message("s1"))
    await server.next_of(ClientMessageType.TASK)
    await server.send(task_message("s2"))
    await server.send(ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="probe"))
    await _until(lambda: connection.state.heartbeat_acks == 1)
    assert connection.state.ignored_tasks == ["s2"] and connection.state.current_session_id == "s1"
    assert [m.type for m in _sent(connection)].count(ClientMessageType.TASK) == 1
    # The server is told, so a dispatch it thought delivered does not stay pending (issue 11).
    busy = await server.next_of(ClientMessageType.ERROR)
    assert busy.session_id == "s2" and "busy with task s1" in (busy.error or "")
    # After TASK_END the device takes the next task.
    await server.send(
        ServerMessage(type=ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s1")
    )
    await server.send(task_message("s3"))
    assert (await server.next_of(ClientMessageType.TASK)).session_id == "s3"


async def test_command_results_echo_status_and_response_id(
    served: tuple[DeviceConnection, FakeServer, asyncio.Task[None]], workspace: Path
) -> None:
    connection, server, _ = served
    await server.send(task_message("s1"))
    await server.next_of(ClientMessageType.TASK)
    await server.send(command("s1", "resp-1", "echo hi > f.txt"))
    answer = await server.next_of(ClientMessageType.COMMAND_RESULTS)
    assert answer.prev_response_id == "resp-1" and answer.session_id == "s1"
    assert answer.status == TaskStatus.CONTINUE and answer.client_id == "dev-1"
    results = answer.action_results or []
    assert [r.status for r in results] == [ResultStatus.SUCCESS] and results[0].call_id == "c1"
    assert (workspace / "f.txt").read_text() == "hi\n"
    # A COMMAND with a final status is echoed and ends the task on the device.
    await server.send(command("s1", "resp-2", "cat f.txt", status=TaskStatus.COMPLETED))
    final = await server.next_of(ClientMessageType.COMMAND_RESULTS)
    assert final.status == TaskStatus.COMPLETED and final.prev_response_id == "resp-2"
    assert (final.action_results or [])[0].result["stdout"] == "hi\n"
    await _until(lambda: connection.state.current_session_id is None)


async def test_malformed_and_unexpected_messages_are_dropped(
    served: tuple[DeviceConnection, FakeServer, asyncio.Task[None]],
) -> None:
    connection, server, serving = served
    await server.transport.send(b"{not json")
    await server.transport.send(b'{"type": "teleport"}')
    await server.transport.send(b'{"type": "command", "session_id": "s"}')  # lacks actions/response_id
    await server.send(ServerMessage(type=ServerMessageType.ERROR, error="you were rude"))
    await server.send(ServerMessage(type=ServerMessageType.DEVICE_INFO_RESPONSE, request_id="x"))
    await server.send(ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="ack"))
    await _until(lambda: connection.state.heartbeat_acks == 1)
    assert not serving.done() and connection.state.server_errors == ["you were rude"]


async def test_device_info_request_is_answered(
    served: tuple[DeviceConnection, FakeServer, asyncio.Task[None]],
) -> None:
    _, server, _ = served
    await server.send(ServerMessage(type=ServerMessageType.DEVICE_INFO_REQUEST, request_id="q1"))
    answer = await server.next_of(ClientMessageType.DEVICE_INFO_RESPONSE)
    assert answer.request_id == "q1" and answer.result["device_id"] == "dev-1"


async def test_heartbeats_are_sent_while_serving(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    clock = VirtualTime()
    connection = make_connection(
        device, client_end, heartbeat_interval=30.0, sleep=clock.sleep, clock=clock.clock
    )
    registering = asyncio.create_task(connection.register())
    await server.confirm_registration()
    await registering
    serving = asyncio.create_task(connection.serve())
    await clock.wait_sleepers(2)
    beats = []
    for _ in range(3):  # acknowledged like a live server does, so the dead-server watchdog stays calm
        await clock.advance(30.0)
        beats.append(await server.next())
        await server.send(ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="ok"))
    assert all(b.type == ClientMessageType.HEARTBEAT and b.status == TaskStatus.OK for b in beats)
    assert all(b.client_id == "dev-1" for b in beats)
    await server_end.close()
    await asyncio.wait_for(serving, 5)
    assert not connection.heartbeats.is_running("dev-1")


async def test_task_end_cancels_the_running_command(
    served: tuple[DeviceConnection, FakeServer, asyncio.Task[None]],
) -> None:
    connection, server, _ = served
    await server.send(task_message("s1"))
    await server.next_of(ClientMessageType.TASK)
    await server.send(command("s1", "slow", "sleep 20"))
    await _until(lambda: connection.device_client.task_lock.locked())
    started = time.monotonic()
    await server.send(
        ServerMessage(type=ServerMessageType.TASK_END, status=TaskStatus.FAILED, session_id="s1")
    )
    # The command is cancelled (the lock is released) just before the task is cleared: wait for both.
    await _until(
        lambda: (
            not connection.device_client.task_lock.locked() and connection.state.current_session_id is None
        )
    )
    assert time.monotonic() - started < 10
    assert connection.state.current_session_id is None
    assert ClientMessageType.COMMAND_RESULTS not in [m.type for m in _sent(connection)]


async def test_disconnect_cancels_commands_and_clears_the_task(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    await server.confirm_registration()
    await registering
    serving = asyncio.create_task(connection.serve())
    await server.send(task_message("s1"))
    await server.next_of(ClientMessageType.TASK)
    await server.send(command("s1", "slow", "sleep 20"))
    await _until(lambda: device.task_lock.locked())
    await server_end.close(1001, "server restarting")
    await asyncio.wait_for(serving, 10)
    assert connection.state.current_session_id is None and not device.task_lock.locked()


def _sent(connection: DeviceConnection) -> list[ClientMessage]:
    transport = connection.transport
    assert isinstance(transport, MemoryTransport)
    return [ClientMessage.model_validate_json(frame) for frame in transport.sent]


async def _until(predicate: Any, seconds: float = WAIT) -> None:
    """Poll ``predicate`` (cheaply) until it holds or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    for _ in range(1_000_000):
        if predicate():
            return
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.001)
    raise AssertionError("condition never became true")


def test_protocol_is_one_object_for_every_flow(device: DeviceClient) -> None:
    client_end, _ = memory_transport_pair()
    connection = make_connection(device, client_end)
    assert isinstance(connection.protocol, AIPProtocol)
    assert connection.protocol.transport is client_end
