"""ConstellationEndpoint over the in-memory transport; the test plays the agent server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from starweave.aip import endpoints as endpoints_module
from starweave.aip.endpoints import ConstellationEndpoint
from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ClientType,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    new_id,
    parse_client_message,
)
from starweave.aip.transport import MemoryTransport, Transport, memory_transport_pair
from starweave.errors import TaskRejected

WAIT = 30.0  # generous: only a failing test waits this long


class ServerSide:
    """The server's end of one in-memory connection."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.heartbeats: list[ClientMessage] = []

    async def recv(self, skip_heartbeats: bool = True) -> ClientMessage:
        while True:
            message = parse_client_message(await asyncio.wait_for(self.transport.receive(), WAIT))
            if skip_heartbeats and message.type == ClientMessageType.HEARTBEAT:
                self.heartbeats.append(message)
                continue
            return message

    async def send(self, type_: ServerMessageType, **fields: Any) -> None:
        fields.setdefault("response_id", new_id())
        message = ServerMessage(type=type_, **fields)
        await self.transport.send(message.model_dump_json(exclude_none=True).encode())


class FakeServer:
    """A transport factory: every connection attempt yields a ServerSide to the test."""

    def __init__(self) -> None:
        self.sides: asyncio.Queue[ServerSide] = asyncio.Queue()
        self.attempts = 0

    def factory(self) -> Transport:
        self.attempts += 1
        client, server = memory_transport_pair()
        self.sides.put_nowait(ServerSide(server))
        return client

    async def accept(self) -> ServerSide:
        return await asyncio.wait_for(self.sides.get(), WAIT)


class RecordingEndpoint(ConstellationEndpoint):
    """Records the disconnection hook's calls, then runs the default behaviour."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lost: list[str] = []

    async def on_device_disconnected(self, device_id: str) -> None:
        self.lost.append(device_id)
        await super().on_device_disconnected(device_id)


def make(server: FakeServer, **kwargs: Any) -> RecordingEndpoint:
    kwargs.setdefault("heartbeat_interval", 30.0)
    return RecordingEndpoint("galaxy", transport_factory=server.factory, **kwargs)


async def confirm(side: ServerSide) -> ClientMessage:
    register = await side.recv()
    await side.send(ServerMessageType.HEARTBEAT, status=TaskStatus.OK)
    return register


async def connect(endpoint: ConstellationEndpoint, server: FakeServer, device: str = "dev1") -> ServerSide:
    attempt = asyncio.create_task(endpoint.connect_to_device(device, "ws://server/ws"))
    side = await server.accept()
    await confirm(side)
    assert await asyncio.wait_for(attempt, WAIT)
    return side


async def test_registers_as_constellation_for_the_target_device() -> None:
    server = FakeServer()
    endpoint = make(server)
    attempt = asyncio.create_task(endpoint.connect_to_device("dev1", "ws://server/ws"))
    side = await server.accept()
    register = await confirm(side)
    assert await attempt
    assert register.type == ClientMessageType.REGISTER
    assert register.client_type == ClientType.CONSTELLATION
    assert register.client_id == "galaxy@dev1" and register.target_id == "dev1"
    assert endpoint.is_device_connected("dev1") and not endpoint.is_device_connected("dev2")
    assert endpoint.last_error("dev1") is None
    await endpoint.stop()
    assert not endpoint.is_device_connected("dev1")


async def test_refused_registration_returns_false_with_the_servers_reason() -> None:
    server = FakeServer()
    endpoint = make(server)
    attempt = asyncio.create_task(endpoint.connect_to_device("ghost", "ws://server/ws"))
    side = await server.accept()
    await side.recv()
    await side.send(
        ServerMessageType.ERROR, status=TaskStatus.ERROR, error="Target device 'ghost' is not connected"
    )
    assert await asyncio.wait_for(attempt, WAIT) is False
    assert "Target device 'ghost' is not connected" in (endpoint.last_error("ghost") or "")
    assert not endpoint.is_device_connected("ghost")
    assert not side.transport.is_connected  # the refused connection is closed


async def test_close_during_registration_reports_the_close_code() -> None:
    server = FakeServer()
    endpoint = make(server)
    attempt = asyncio.create_task(endpoint.connect_to_device("dev1", "ws://server/ws"))
    side = await server.accept()
    await side.recv()
    await side.transport.close(1008, "invalid API key")
    assert await asyncio.wait_for(attempt, WAIT) is False
    error = endpoint.last_error("dev1") or ""
    assert "1008" in error and "invalid API key" in error


async def test_task_waits_for_its_own_task_end_past_acks_and_other_sessions() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    sending = asyncio.create_task(
        endpoint.send_task_to_device(
            "dev1", {"request": "open the report", "session_id": "s-1"}, timeout=WAIT
        )
    )
    task = await side.recv()
    assert task.type == ClientMessageType.TASK
    assert task.client_type == ClientType.CONSTELLATION and task.target_id == "dev1"
    assert task.client_id == "galaxy@dev1" and task.request == "open the report"
    assert task.session_id == "s-1" and task.task_name == "multi_device_task-s-1"
    await side.send(ServerMessageType.HEARTBEAT, status=TaskStatus.OK, session_id="s-1")
    await side.send(ServerMessageType.TASK_END, status=TaskStatus.FAILED, session_id="other")
    await asyncio.sleep(0.05)
    assert not sending.done()
    await side.send(
        ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s-1", result={"ok": 1}
    )
    end = await asyncio.wait_for(sending, WAIT)
    assert end.status == TaskStatus.COMPLETED and end.result == {"ok": 1}
    await endpoint.stop()


async def test_task_name_and_session_id_are_used_when_given_or_generated() -> None:
    server = FakeServer()
    endpoint = ConstellationEndpoint("g", task_name="plan", transport_factory=server.factory)
    side = await connect(endpoint, server)
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r", "task_name": "t1"}))
    task = await side.recv()
    assert task.task_name == "t1" and task.session_id
    await side.send(ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id=task.session_id)
    assert (await asyncio.wait_for(sending, WAIT)).session_id == task.session_id
    second = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "again"}))
    task2 = await side.recv()
    assert task2.session_id != task.session_id and task2.task_name == f"plan-{task2.session_id}"
    await side.send(ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id=task2.session_id)
    await asyncio.wait_for(second, WAIT)
    with pytest.raises(ValueError, match="request"):
        await endpoint.send_task_to_device("dev1", {"task_name": "x"})
    await endpoint.stop()


async def test_failed_task_end_is_returned_with_the_servers_reason() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s"}))
    await side.recv()
    await side.send(
        ServerMessageType.TASK_END,
        status=TaskStatus.FAILED,
        session_id="s",
        error="Device disconnected before the task finished",
    )
    end = await asyncio.wait_for(sending, WAIT)
    assert end.status == TaskStatus.FAILED and end.error == "Device disconnected before the task finished"
    await endpoint.stop()


async def test_server_error_for_the_session_raises_task_rejected() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s"}))
    await side.recv()
    await side.send(
        ServerMessageType.ERROR,
        status=TaskStatus.ERROR,
        session_id="s",
        error="Target device 'dev1' is not connected",
    )
    with pytest.raises(TaskRejected, match="not connected") as caught:
        await asyncio.wait_for(sending, WAIT)
    assert caught.value.session_id == "s" and caught.value.device_id == "dev1"
    assert "not connected" in (endpoint.last_error("dev1") or "")
    assert endpoint.is_device_connected("dev1")  # a refused task does not end the connection
    await endpoint.stop()


async def test_task_timeout_raises_and_forgets_the_session() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    with pytest.raises(TimeoutError, match="s-slow"):
        await endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s-slow"}, timeout=0.1)
    await side.recv()
    # The same session id may be used again once the first wait is over.
    again = asyncio.create_task(
        endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s-slow"})
    )
    await side.recv()
    await side.send(ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s-slow")
    assert (await asyncio.wait_for(again, WAIT)).status == TaskStatus.COMPLETED
    await endpoint.stop()


async def test_lost_connection_fails_pending_work_and_calls_the_hook() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r"}))
    info = asyncio.create_task(endpoint.request_device_info("dev1"))
    await side.recv()
    await side.recv()
    await side.transport.close(1011, "server going down")
    with pytest.raises(ConnectionError, match="server going down"):
        await asyncio.wait_for(sending, WAIT)
    assert await asyncio.wait_for(info, WAIT) is None
    assert endpoint.lost == ["dev1"]
    assert not endpoint.is_device_connected("dev1")
    assert "server going down" in (endpoint.last_error("dev1") or "")
    with pytest.raises(ConnectionError, match="connect_to_device"):
        await endpoint.send_task_to_device("dev1", {"request": "r"})
    assert server.attempts == 1  # no strategy → no reconnection


async def test_deliberate_disconnect_fails_tasks_without_calling_the_hook() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r"}))
    assert (await side.recv()).type == ClientMessageType.TASK  # the task is pending now
    await endpoint.disconnect_device("dev1")
    with pytest.raises(ConnectionError, match="disconnected by the constellation"):
        await asyncio.wait_for(sending, WAIT)
    assert endpoint.lost == [] and not endpoint.is_device_connected("dev1")


async def test_cancel_device_tasks_fails_each_pending_task_with_the_reason() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    tasks = [
        asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": f"r{i}"})) for i in range(3)
    ]
    for _ in tasks:  # all three are pending now
        assert (await side.recv()).type == ClientMessageType.TASK
    await endpoint.cancel_device_tasks("dev1", "device_disconnected")
    for task in tasks:
        with pytest.raises(ConnectionError, match="device_disconnected"):
            await asyncio.wait_for(task, WAIT)
    assert endpoint.is_device_connected("dev1")  # only the tasks are cancelled
    await endpoint.stop()


async def test_device_info_is_matched_by_request_id() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    asking = asyncio.create_task(endpoint.request_device_info("dev1"))
    request = await side.recv()
    assert request.type == ClientMessageType.DEVICE_INFO_REQUEST
    assert (
        request.target_id == "dev1" and request.client_type == ClientType.CONSTELLATION and request.request_id
    )
    await side.send(ServerMessageType.DEVICE_INFO_RESPONSE, request_id="someone-else", result={"os": "wrong"})
    await side.send(
        ServerMessageType.DEVICE_INFO_RESPONSE, request_id=request.request_id, result={"os": "linux"}
    )
    assert await asyncio.wait_for(asking, WAIT) == {"os": "linux"}

    asking = asyncio.create_task(endpoint.request_device_info("dev1"))
    request = await side.recv()
    await side.send(
        ServerMessageType.DEVICE_INFO_RESPONSE,
        status=TaskStatus.ERROR,
        request_id=request.request_id,
        error="Device 'dev1' is not connected",
    )
    assert await asyncio.wait_for(asking, WAIT) is None
    assert "not connected" in (endpoint.last_error("dev1") or "")
    assert await endpoint.request_device_info("never-connected") is None
    assert await endpoint.request_device_info("dev1", timeout=0.05) is None
    assert "no answer" in (endpoint.last_error("dev1") or "")
    await endpoint.stop()


async def test_heartbeats_are_sent_as_the_constellation_client() -> None:
    server = FakeServer()
    endpoint = make(server, heartbeat_interval=0.02)
    side = await connect(endpoint, server)
    heartbeat = await side.recv(skip_heartbeats=False)
    assert heartbeat.type == ClientMessageType.HEARTBEAT
    assert heartbeat.client_type == ClientType.CONSTELLATION and heartbeat.client_id == "galaxy@dev1"
    await endpoint.stop()


async def test_a_lost_connection_is_not_reconnected_by_the_endpoint_but_by_its_owner() -> None:
    server = FakeServer()
    endpoint = make(server)
    side = await connect(endpoint, server)
    await side.transport.close(1011, "restart")
    deadline = time.monotonic() + WAIT
    while endpoint.lost != ["dev1"]:
        assert time.monotonic() < deadline, "the loss was never reported"
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert server.attempts == 1 and not endpoint.is_device_connected("dev1")
    # The owner (the Galaxy device manager) reconnects with connect_to_device.
    attempt = asyncio.create_task(endpoint.connect_to_device("dev1", "ws://server/ws"))
    refused = await server.accept()  # the device has not come back yet
    await refused.recv()
    await refused.send(
        ServerMessageType.ERROR, status=TaskStatus.ERROR, error="Target device 'dev1' is not connected"
    )
    assert await asyncio.wait_for(attempt, WAIT) is False
    assert "not connected" in (endpoint.last_error("dev1") or "")
    accepted = await connect(endpoint, server)
    assert endpoint.is_device_connected("dev1") and server.attempts == 3
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s"}))
    await accepted.recv()
    await accepted.send(ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s")
    assert (await asyncio.wait_for(sending, WAIT)).status == TaskStatus.COMPLETED
    await endpoint.stop()
    assert endpoint.lost == ["dev1"]  # a deliberate stop is not a loss


async def test_message_processor_sees_messages_and_cannot_break_the_loop() -> None:
    seen: list[ServerMessageType] = []

    class Processor:
        async def process_message(self, message: ServerMessage) -> None:
            seen.append(message.type)
            if message.type == ServerMessageType.HEARTBEAT:
                raise RuntimeError("processor bug")

    server = FakeServer()
    endpoint = ConstellationEndpoint("g", transport_factory=server.factory, message_processor=Processor())
    side = await connect(endpoint, server)
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s"}))
    await side.recv()
    await side.send(ServerMessageType.HEARTBEAT, status=TaskStatus.OK)
    await side.send(ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s")
    assert (await asyncio.wait_for(sending, WAIT)).status == TaskStatus.COMPLETED
    assert seen == [ServerMessageType.HEARTBEAT, ServerMessageType.TASK_END]
    await endpoint.stop()


async def test_connecting_again_to_the_same_server_is_a_no_op() -> None:
    server = FakeServer()
    endpoint = make(server)
    await connect(endpoint, server)
    assert await endpoint.connect_to_device("dev1", "ws://server/ws")
    assert server.attempts == 1
    await endpoint.stop()


def test_aip_does_not_reach_into_the_client_or_server_layers() -> None:
    assert not hasattr(endpoints_module, "DeviceClientEndpoint")
    assert not hasattr(endpoints_module, "DeviceServerEndpoint")
    source = Path(endpoints_module.__file__).read_text(encoding="utf-8")
    assert "starweave.client." in source and "import_module" not in source  # named, never imported
    assert "from starweave.client" not in source and "from starweave.server" not in source
    with pytest.raises(ValueError):
        ConstellationEndpoint("")


async def test_a_task_over_the_frame_limit_is_refused_before_it_is_sent() -> None:
    server = FakeServer()
    endpoint = make(server, max_frame_bytes=2048)
    side = await connect(endpoint, server)
    with pytest.raises(TaskRejected, match="over the server's frame limit of 2048 bytes"):
        await endpoint.send_task_to_device("dev1", {"request": "x" * 4000, "session_id": "big"})
    assert "frame limit" in (endpoint.last_error("dev1") or "")
    # Nothing was sent, and the connection still carries normal tasks.
    sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "r", "session_id": "s"}))
    task = await side.recv()
    assert task.session_id == "s"
    await side.send(ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s")
    assert (await asyncio.wait_for(sending, WAIT)).status == TaskStatus.COMPLETED
    await endpoint.stop()
