"""Request bodies: too large (413), too slow (408), a dispatch request over its limit, the fd limit."""

from __future__ import annotations

import asyncio
import resource
import socket
from collections.abc import AsyncIterator

import httpx
from unit.server.server_kit import TIMEOUT, fake_factory, peer, running_server, settings

from starweave.aip.messages import ServerMessageType
from starweave.server.app import create_app
from starweave.server.limits import raise_open_file_limit

BASE = "http://127.0.0.1:5000"


async def _post(body: bytes | AsyncIterator[bytes], **overrides: object) -> httpx.Response:
    app = create_app(settings(port=5000, **overrides), fake_factory)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        return await client.post("/api/dispatch", content=body, headers={"content-type": "application/json"})


async def test_declared_oversize_body_gets_413_before_it_is_read() -> None:
    response = await _post(b"x" * 5000, max_body_bytes=4096)
    assert response.status_code == 413
    assert response.json() == {"detail": "Request body too large (5000 bytes): the limit is 4096 bytes"}


async def test_streamed_oversize_body_gets_413() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"y" * 1000

    response = await _post(chunks(), max_body_bytes=4096)
    assert response.status_code == 413 and "the limit is 4096 bytes" in response.json()["detail"]


async def test_body_within_the_limit_reaches_the_route() -> None:
    response = await _post(b'{"request": "r", "client_id": "ghost"}', max_body_bytes=4096)
    assert response.status_code == 404 and response.json() == {"detail": "Client not online"}


async def test_dispatch_request_over_its_limit_is_413_and_the_device_stays_usable() -> None:
    async with (
        running_server(max_request_bytes=1000) as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        big = await http.post("/api/dispatch", json={"client_id": "dev1", "request": "é" * 600})
        assert big.status_code == 413
        assert big.json() == {"detail": "Task request too large (1200 bytes): the limit is 1000 bytes"}
        small = {"client_id": "dev1", "request": "small", "task_name": "t"}
        ok = await http.post("/api/dispatch", json=small)
        assert ok.status_code == 200 and ok.json()["queue_position"] == 0
        assert (await dev.recv_until(ServerMessageType.TASK)).user_request == "small"


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends before it closes: the head and body may come in separate reads."""
    chunks: list[bytes] = []
    while chunk := sock.recv(4096):
        chunks.append(chunk)
    return b"".join(chunks)


async def test_a_body_that_trickles_in_gets_408() -> None:
    async with running_server(body_timeout=0.5) as server:
        sock = socket.create_connection(("127.0.0.1", server.port))
        try:
            sock.sendall(
                b"POST /api/dispatch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            sock.settimeout(TIMEOUT)
            reply = await asyncio.to_thread(_read_until_closed, sock)
        finally:
            sock.close()
    assert reply.startswith(b"HTTP/1.1 408") and b"not received within 0.5s" in reply


async def test_invalid_content_length_is_400() -> None:
    app = create_app(settings(port=5000), fake_factory)
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/dispatch",
        "headers": [(b"host", b"127.0.0.1:5000"), (b"content-length", b"lots")],
        "query_string": b"",
    }
    await app(scope, receive, send)  # type: ignore[arg-type]
    assert sent[0]["status"] == 400


def test_open_file_limit_is_raised_to_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
        now_soft, now_hard = raise_open_file_limit()
        assert now_hard == hard
        assert now_soft == (hard if hard != resource.RLIM_INFINITY else max(1024, 1 << 20))
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == now_soft
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
