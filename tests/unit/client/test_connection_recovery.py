"""DeviceConnection recovering from server-side trouble: refused tasks, a silent server, huge output."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from unit.client.virtual_time import REAL_WAIT, VirtualTime, until

from starweave.aip import builders
from starweave.aip.frame_limit import fit_results, frame_size
from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    Command,
    Result,
    ResultStatus,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
)
from starweave.aip.protocols import AIPProtocol
from starweave.aip.transport import MemoryTransport, memory_transport_pair
from starweave.client.connection import ConnectionSettings, DeviceConnection, is_duplicate_refusal
from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider, SystemProbe

WAIT = 10.0
PROBE = DeviceInfoProvider(SystemProbe(route_ip=lambda: "10.0.0.7", resolved_ip=lambda: "10.0.0.7"))


class FakeServer:
    """The server end of an in-memory pair."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.protocol = AIPProtocol(transport)

    async def next_of(self, kind: ClientMessageType) -> ClientMessage:
        while True:
            message = await asyncio.wait_for(self.protocol.receive_message(ClientMessage), WAIT)
            if message.type == kind:
                return message
            assert message.type == ClientMessageType.HEARTBEAT, message

    async def send(self, message: ServerMessage) -> None:
        await self.protocol.send_message(message)


async def start(
    device: DeviceClient, **kwargs: Any
) -> tuple[DeviceConnection, FakeServer, asyncio.Task[None]]:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    kwargs.setdefault("heartbeat_interval", 30.0)
    connection = DeviceConnection(client_end, device, ConnectionSettings(info_provider=PROBE, **kwargs))
    registering = asyncio.create_task(connection.register())
    await asyncio.wait_for(server.protocol.receive_message(ClientMessage), WAIT)
    await AIPProtocol(server_end).send_message(builders.heartbeat_ack())
    await registering
    return connection, server, asyncio.create_task(connection.serve())


@pytest.fixture
async def served(device: DeviceClient) -> AsyncIterator[tuple[DeviceConnection, FakeServer]]:
    connection, server, serving = await start(device)
    yield connection, server
    await server.transport.close()
    await asyncio.wait_for(serving, WAIT)


def task(session_id: str) -> ServerMessage:
    return ServerMessage(type=ServerMessageType.TASK, user_request="r", task_name="t", session_id=session_id)


async def test_an_error_about_the_running_task_frees_the_device(
    served: tuple[DeviceConnection, FakeServer],
) -> None:
    connection, server = served
    await server.send(task("s1"))
    await server.next_of(ClientMessageType.TASK)
    # An error about another session leaves the running task alone.
    await server.send(ServerMessage(type=ServerMessageType.ERROR, error="other", session_id="zz"))
    await server.send(ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="probe"))
    await until(lambda: connection.state.heartbeat_acks == 1)
    assert connection.state.current_session_id == "s1"
    await server.send(
        ServerMessage(type=ServerMessageType.ERROR, error="Session 's1' is already running", session_id="s1")
    )
    await until(lambda: connection.state.current_session_id is None)
    await server.send(task("s2"))
    assert (await server.next_of(ClientMessageType.TASK)).session_id == "s2"
    assert connection.state.ignored_tasks == []


async def test_a_failed_task_end_frees_the_device(served: tuple[DeviceConnection, FakeServer]) -> None:
    connection, server = served
    await server.send(task("s1"))
    await server.next_of(ClientMessageType.TASK)
    await server.send(
        ServerMessage(type=ServerMessageType.TASK_END, status=TaskStatus.FAILED, session_id="s1", error="x")
    )
    await server.send(task("s2"))
    assert (await server.next_of(ClientMessageType.TASK)).session_id == "s2"
    assert connection.state.ignored_tasks == []


async def test_a_silent_server_is_detected_and_the_transport_closed(device: DeviceClient) -> None:
    clock = VirtualTime()
    connection, server, serving = await start(
        device, heartbeat_interval=30.0, sleep=clock.sleep, clock=clock.clock
    )
    await clock.wait_sleepers(2)  # the heartbeat loop and the dead-server watchdog
    await clock.advance(75.0)  # two and a half intervals without an answer: still trusted
    assert not serving.done() and connection.dead_reason is None
    await clock.advance(16.0)  # past three intervals
    await asyncio.wait_for(serving, REAL_WAIT)
    assert "no answer from the server for 90.0s" in (connection.dead_reason or "")
    assert server.transport.close_code == 1001 and not connection.transport.is_connected


async def test_an_answering_server_keeps_the_connection(device: DeviceClient) -> None:
    clock = VirtualTime()
    connection, server, serving = await start(
        device, heartbeat_interval=30.0, sleep=clock.sleep, clock=clock.clock
    )
    await clock.wait_sleepers(2)
    for beat in range(1, 9):  # eight intervals, each heartbeat answered
        await clock.advance(30.0)
        await server.next_of(ClientMessageType.HEARTBEAT)
        await server.send(ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="ok"))
        await until(lambda n=beat: connection.state.heartbeat_acks == n, "the heartbeat ack")
    assert not serving.done() and connection.dead_reason is None
    await server.transport.close()
    await asyncio.wait_for(serving, WAIT)


async def test_output_over_the_frame_limit_becomes_a_failure(device: DeviceClient) -> None:
    _, server, serving = await start(device, max_frame_bytes=8192)
    await server.send(task("s1"))
    await server.next_of(ClientMessageType.TASK)
    actions = [
        Command(tool_name="execute_command", parameters={"command": cmd}, tool_type="action", call_id=cid)
        for cid, cmd in (("big", "head -c 20000 /dev/zero | tr '\\0' a"), ("small", "echo hi"))
    ]
    await server.send(
        ServerMessage(
            type=ServerMessageType.COMMAND,
            status=TaskStatus.CONTINUE,
            actions=actions,
            session_id="s1",
            response_id="r1",
            agent_name="LinuxAgent",
        )
    )
    answer = await server.next_of(ClientMessageType.COMMAND_RESULTS)
    assert frame_size(answer) <= 8192 and answer.prev_response_id == "r1"
    big, small = answer.action_results or []
    assert big.call_id == "big" and big.status == ResultStatus.FAILURE and big.result is None
    assert "too large" in (big.error or "") and "8192" in (big.error or "")
    assert small.call_id == "small" and small.status == ResultStatus.SUCCESS
    await server.transport.close()
    await asyncio.wait_for(serving, WAIT)


def test_fit_results_replaces_the_largest_first_and_keeps_order() -> None:
    envelope = ClientMessage(type=ClientMessageType.COMMAND_RESULTS, client_id="d", session_id="s")
    results = [
        Result(status=ResultStatus.SUCCESS, result="a" * 3000, call_id="mid"),
        Result(status=ResultStatus.SUCCESS, result="b" * 6000, call_id="huge"),
        Result(status=ResultStatus.SUCCESS, result="c", call_id="tiny"),
    ]
    assert fit_results(envelope, results, 100_000) == results  # fits: untouched
    fitted = fit_results(envelope, results, 5000)
    assert [r.call_id for r in fitted] == ["mid", "huge", "tiny"]
    assert [r.status for r in fitted] == [ResultStatus.SUCCESS, ResultStatus.FAILURE, ResultStatus.SUCCESS]
    assert frame_size(envelope.model_copy(update={"action_results": fitted})) <= 5000
    both = fit_results(envelope, results, 1000)
    assert [r.status for r in both] == [ResultStatus.FAILURE, ResultStatus.FAILURE, ResultStatus.SUCCESS]


def test_duplicate_refusal_detection() -> None:
    assert is_duplicate_refusal("registration of 'd' refused: Client ID 'd' is already connected")
    assert not is_duplicate_refusal("Invalid API token")
