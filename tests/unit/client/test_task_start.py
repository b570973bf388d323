"""Nothing the server sends leaves the device believing it has a task for ever (issue 11).

An oversize TASK (its echo would exceed the server's frame limit) is refused at once; a task the
server never confirms is dropped after ``task_start_timeout`` (on virtual time here); a confirmed
one is kept. Each time the device tells the server, and takes the next task.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from unit.client.test_connection import FakeServer, make_connection, task_message
from unit.client.virtual_time import VirtualTime, until

from starweave.aip.messages import ClientMessageType, ServerMessage, ServerMessageType, TaskStatus
from starweave.aip.protocols import RegistrationProtocol
from starweave.aip.transport import memory_transport_pair
from starweave.client.connection import DeviceConnection
from starweave.client.device_client import DeviceClient

Served = tuple[DeviceConnection, FakeServer, VirtualTime]


async def _serve(
    device: DeviceClient, **kwargs: Any
) -> tuple[DeviceConnection, FakeServer, asyncio.Task[None]]:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    connection = make_connection(device, client_end, **kwargs)
    registering = asyncio.create_task(connection.register())
    await server.confirm_registration()
    await registering
    return connection, server, asyncio.create_task(connection.serve())


@pytest.fixture
async def served(device: DeviceClient) -> AsyncIterator[Served]:
    clock = VirtualTime()
    connection, server, serving = await _serve(
        device, sleep=clock.sleep, clock=clock.clock, max_frame_bytes=4096, task_start_timeout=60.0
    )
    yield connection, server, clock
    await server.transport.close()
    await asyncio.wait_for(serving, 30)


async def test_a_task_too_large_to_echo_is_refused_and_the_device_stays_free(served: Served) -> None:
    connection, server, _ = served
    await server.send(task_message("big", request="x" * 5000))
    error = await server.next_of(ClientMessageType.ERROR)
    assert error.session_id == "big" and "over the server's frame limit of 4096 bytes" in (error.error or "")
    assert connection.state.current_session_id is None
    await server.send(task_message("next", request="small"))
    assert (await server.next_of(ClientMessageType.TASK)).session_id == "next"


async def test_a_task_the_server_never_confirms_is_dropped(served: Served) -> None:
    connection, server, clock = served
    await server.send(task_message("s1"))
    await server.next_of(ClientMessageType.TASK)  # the echo; its answer never comes
    await until(lambda: connection._start_watch is not None, "the start watch")
    await clock.advance(59.0)
    assert connection.state.current_session_id == "s1"
    await clock.advance(2.0)
    error = await server.next_of(ClientMessageType.ERROR)
    assert error.session_id == "s1" and "did not confirm task t1 within 60s" in (error.error or "")
    assert connection.state.current_session_id is None
    await server.send(task_message("s2"))
    assert (await server.next_of(ClientMessageType.TASK)).session_id == "s2"


@pytest.mark.parametrize("confirmation", ["ack", "command"])
async def test_a_confirmed_task_is_kept(served: Served, confirmation: str) -> None:
    connection, server, clock = served
    await server.send(task_message("s1"))
    await server.next_of(ClientMessageType.TASK)
    if confirmation == "ack":  # what Starweave's server sends once the session runs
        await server.send(
            ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="a", session_id="s1", task_name="t1")
        )
    else:
        await server.send(
            ServerMessage(
                type=ServerMessageType.COMMAND,
                status=TaskStatus.CONTINUE,
                actions=[],
                session_id="s1",
                response_id="r1",
                agent_name="LinuxAgent",
            )
        )
        await server.next_of(ClientMessageType.COMMAND_RESULTS)
    await until(lambda: connection._start_watch is not None and connection._start_watch.done(), "watch ends")
    await clock.advance(61.0)  # past the start timeout (not the 90 s dead-server limit)
    assert connection.state.current_session_id == "s1" and connection.transport.is_connected


async def test_an_issued_device_token_is_taken_from_the_registration_answer(device: DeviceClient) -> None:
    client_end, server_end = memory_transport_pair()
    server = FakeServer(server_end)
    connection = make_connection(device, client_end)
    registering = asyncio.create_task(connection.register())
    request = await server.next()
    assert (request.metadata or {}).get("request_device_token") is True
    await RegistrationProtocol(server_end).send_message(
        ServerMessage(
            type=ServerMessageType.HEARTBEAT, status=TaskStatus.OK, response_id="r", device_token="swd_x"
        )
    )
    await registering
    assert connection.issued_token == "swd_x"
