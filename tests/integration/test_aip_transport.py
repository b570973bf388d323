"""WebSocketTransport and the protocols over a real loopback WebSocket server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from http import HTTPStatus

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from starweave.aip import builders
from starweave.aip.messages import ClientMessage, ServerMessage, ServerMessageType
from starweave.aip.protocols import HeartbeatProtocol, RegistrationProtocol
from starweave.aip.transport import TransportState, WebSocketTransport
from starweave.errors import HandshakeRejected, TransportClosed

WAIT = 10.0


async def echo_or_close(ws: ServerConnection) -> None:
    """Echo frames (keeping text as text); ``close:CODE:REASON`` closes with that code."""
    async for frame in ws:
        text = frame if isinstance(frame, str) else frame.decode()
        if text.startswith("close:"):
            _, code, reason = text.split(":", 2)
            await ws.close(int(code), reason)
            return
        await ws.send(f"{type(frame).__name__}:{text}")


def reject_private(ws: ServerConnection, request: Request) -> Response | None:
    if request.path.startswith("/private"):
        return ws.respond(HTTPStatus.UNAUTHORIZED, "missing API key\n")
    return None


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with serve(echo_or_close, "127.0.0.1", 0, process_request=reject_private, max_size=2048) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


async def test_send_receive_as_text_frames_and_close(url: str) -> None:
    async with WebSocketTransport() as transport:
        await transport.connect(f"{url}/ws", headers={"X-API-Key": "k"})
        assert transport.state == TransportState.CONNECTED and transport.is_connected
        await transport.send('{"hello": "wörld"}'.encode())
        assert await asyncio.wait_for(transport.receive(), WAIT) == 'str:{"hello": "wörld"}'.encode()
    assert transport.state == TransportState.DISCONNECTED
    with pytest.raises(TransportClosed):
        await transport.send(b"{}")


async def test_server_close_code_and_reason_reach_the_caller(url: str) -> None:
    transport = WebSocketTransport()
    await transport.connect(f"{url}/ws")
    await transport.send(b"close:1008:Invalid API key")
    with pytest.raises(TransportClosed) as info:
        await asyncio.wait_for(transport.receive(), WAIT)
    assert (info.value.code, info.value.reason) == (1008, "Invalid API key")
    assert not transport.is_connected
    await transport.wait_closed()


async def test_oversized_frame_closes_the_connection(url: str) -> None:
    transport = WebSocketTransport()
    await transport.connect(f"{url}/ws")
    await transport.send(b"x" * 4096)  # the server's max_size is 2048
    with pytest.raises(TransportClosed) as info:
        await asyncio.wait_for(transport.receive(), WAIT)
    assert info.value.code == 1009


async def test_refused_upgrade_is_a_handshake_rejection_with_the_status(url: str) -> None:
    transport = WebSocketTransport()
    with pytest.raises(HandshakeRejected) as info:
        await transport.connect(f"{url}/private")
    assert info.value.status_code == 401 and "missing API key" in str(info.value)
    assert transport.state == TransportState.ERROR


async def test_registration_over_a_real_socket() -> None:
    async def registrar(ws: ServerConnection) -> None:
        server = RegistrationProtocol(WebSocketTransport(ws))
        request = await server.receive_message(ClientMessage)
        assert request.client_id == "dev-1"
        await server.send_message(builders.heartbeat_ack("reg-1"))
        beat = await server.receive_message(ClientMessage)
        await server.send_message(builders.heartbeat_ack(beat.request_id))
        await ws.wait_closed()

    async with serve(registrar, "127.0.0.1", 0) as srv:
        port = next(iter(srv.sockets)).getsockname()[1]
        transport = WebSocketTransport()
        await transport.connect(f"ws://127.0.0.1:{port}/ws")
        client = RegistrationProtocol(transport)
        assert await client.register_as_device("dev-1", {"x": 1}, platform="linux", timeout=WAIT)
        await HeartbeatProtocol(transport).send_heartbeat("dev-1")
        ack = await asyncio.wait_for(client.receive_message(ServerMessage), WAIT)
        assert ack.type == ServerMessageType.HEARTBEAT
        await transport.close()
