"""Who a client is: platform detection (B2), client_id/client_type checks, foreign Host, dispatch targets."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest
from unit.server.server_kit import TIMEOUT, FakeSession, peer, running_server
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from starweave.aip.messages import ClientMessageType, ClientType, ServerMessageType, TaskStatus, new_id
from starweave.server.registry import resolve_platform


def test_resolve_platform_order() -> None:
    assert resolve_platform({"platform": "Linux", "system_info": {"platform": "x"}}, "srv") == "linux"
    assert resolve_platform({"system_info": {"platform": "linux"}}, "srv") == "linux"
    assert resolve_platform({"registration_time": "now"}, "srv") == "srv"
    assert resolve_platform(None, "srv") == "srv"


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"system_info": {"platform": "linux", "os": "Linux"}, "registration_time": "t"}, "linux"),
        ({"registration_time": "t"}, "plan9"),  # the server's --platform
    ],
)
async def test_session_gets_the_device_platform(metadata: dict, expected: str) -> None:
    async with running_server(platform="plan9") as server, peer(server, "dev1", metadata=metadata) as dev:
        assert server.app.state.registry.get_client_info("dev1").platform == expected
        await dev.send(ClientMessageType.TASK, request="hang", task_name=f"p-{expected}", session_id=new_id())
        await dev.recv_until(ServerMessageType.HEARTBEAT)
        session = next(s for s in FakeSession.created if s.task_name == f"p-{expected}")
        assert session.platform == expected


async def test_client_type_is_compared_only_when_sent() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1"),
        peer(server, "c1", ClientType.CONSTELLATION, target_id="dev1") as constellation,
    ):
        # A heartbeat without client_type: pydantic's default "device" must not count.
        await constellation.send_raw(json.dumps({"type": "heartbeat", "client_id": "c1", "status": "ok"}))
        ack = await constellation.recv()
        assert ack.type == ServerMessageType.HEARTBEAT and ack.status == TaskStatus.OK
        await constellation.send_raw(
            json.dumps({"type": "heartbeat", "client_id": "c1", "client_type": "device"})
        )
        error = await constellation.recv()
        assert error.type == ServerMessageType.ERROR and "client_type" in (error.error or "")


async def test_frame_with_another_client_id_is_refused() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        await dev.send(ClientMessageType.HEARTBEAT, client_id="dev2")
        error = await dev.recv()
        assert error.type == ServerMessageType.ERROR
        assert error.error == "client_id 'dev2' does not match this connection ('dev1')"


async def test_command_results_for_another_devices_session_are_refused() -> None:
    async with running_server() as server, peer(server, "dev1") as dev1, peer(server, "dev2") as dev2:
        await dev1.send(ClientMessageType.TASK, request="hi", task_name="own", session_id=new_id())
        command = await dev1.recv_until(ServerMessageType.COMMAND)
        await dev2.answer_command(command)
        error = await dev2.recv_until(ServerMessageType.ERROR)
        assert error.error == f"Session '{command.session_id}' does not run on this client"
        # The real device can still answer.
        await dev1.answer_command(command)
        assert (await dev1.recv_until(ServerMessageType.TASK_END)).status == TaskStatus.COMPLETED


async def test_foreign_host_header_on_ws_is_refused() -> None:
    async with running_server() as server:
        sock = socket.create_connection(("127.0.0.1", server.port))
        async with connect(f"ws://evil.example:{server.port}/ws", sock=sock, open_timeout=TIMEOUT) as conn:
            with pytest.raises(ConnectionClosed) as info:
                async with asyncio.timeout(TIMEOUT):
                    while True:
                        await conn.recv()
        assert info.value.rcvd is not None and info.value.rcvd.code == 1008
        assert "evil.example" in info.value.rcvd.reason
        assert server.app.state.registry.list_clients() == []


async def test_dispatch_only_targets_devices() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1"),
        peer(server, "c1", ClientType.CONSTELLATION, target_id="dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        response = await http.post("/api/dispatch", json={"client_id": "c1", "request": "hi"})
        assert response.status_code == 400 and response.json() == {"detail": "Client 'c1' is not a device"}
