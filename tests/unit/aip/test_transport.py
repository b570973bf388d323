"""The in-memory transport pair and the Transport contract."""

from __future__ import annotations

import asyncio

import pytest

from starweave.aip.transport import MemoryTransport, TransportState, WebSocketTransport, memory_transport_pair
from starweave.errors import TransportClosed


async def test_pair_delivers_frames_both_ways_in_order() -> None:
    a, b = memory_transport_pair()
    await a.send(b"one")
    await a.send(b"two")
    await b.send(b"back")
    assert await b.receive() == b"one"
    assert await b.receive() == b"two"
    assert await a.receive() == b"back"
    assert a.state == TransportState.CONNECTED and a.is_connected


async def test_close_reaches_the_peer_with_code_and_reason_after_pending_frames() -> None:
    a, b = memory_transport_pair()
    await a.send(b"last words")
    await a.close(1008, "invalid token")
    assert await b.receive() == b"last words"
    with pytest.raises(TransportClosed) as info:
        await b.receive()
    assert info.value.code == 1008 and info.value.reason == "invalid token"
    assert isinstance(info.value, ConnectionError)
    assert "1008" in str(info.value)
    # Later receives keep failing instead of hanging.
    with pytest.raises(TransportClosed):
        await asyncio.wait_for(b.receive(), 1)
    await asyncio.wait_for(b.wait_closed(), 1)


async def test_send_after_close_raises_connection_error() -> None:
    a, b = memory_transport_pair()
    await b.close()
    assert a.state == TransportState.DISCONNECTED
    with pytest.raises(ConnectionError):
        await a.send(b"x")
    with pytest.raises(ConnectionError):
        await b.send(b"x")
    await a.close()  # idempotent


async def test_receive_waits_for_a_frame() -> None:
    a, b = memory_transport_pair()
    waiting = asyncio.create_task(b.receive())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    await a.send(b"hello")
    assert await asyncio.wait_for(waiting, 30) == b"hello"


async def test_unpaired_memory_transport_cannot_connect() -> None:
    lonely = MemoryTransport()
    with pytest.raises(ConnectionError):
        await lonely.connect("memory://nowhere")


async def test_websocket_transport_refuses_io_before_connect() -> None:
    transport = WebSocketTransport()
    assert transport.state == TransportState.DISCONNECTED
    assert transport.max_size == 10 * 1024 * 1024
    with pytest.raises(TransportClosed):
        await transport.send(b"{}")
    with pytest.raises(TransportClosed):
        await transport.receive()


async def test_websocket_transport_reports_an_unreachable_server() -> None:
    transport = WebSocketTransport()
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    with pytest.raises(ConnectionError, match="cannot connect"):
        await transport.connect("ws://127.0.0.1:1/ws")
    assert transport.state == TransportState.ERROR


async def test_websocket_transport_rejects_a_bad_url() -> None:
    with pytest.raises(ConnectionError, match="invalid WebSocket URL"):
        await WebSocketTransport().connect("http://not-a-websocket")
