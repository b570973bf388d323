"""Connections that send no request: the pending-connection guard, alone and in a real server."""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest
from unit.server.server_kit import TIMEOUT, peer, running_server

from starweave.server.guard import PendingConnections


class Conn:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def close_pending(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_oldest_pending_connection_is_closed_beyond_the_limit() -> None:
    guard = PendingConnections(limit=3, header_timeout=10.0, clock=Clock())
    conns = [Conn(str(i)) for i in range(5)]
    for conn in conns:
        guard.enter(conn)
    assert [c.closed for c in conns] == [True, True, False, False, False]
    assert len(guard) == 3 and guard.evicted == 2
    guard.leave(conns[3])  # it sent its request head
    guard.enter(Conn("new"))
    assert not conns[2].closed and len(guard) == 3


def test_entering_again_restarts_the_age() -> None:
    guard = PendingConnections(limit=2, header_timeout=10.0, clock=Clock())
    a, b, c = Conn("a"), Conn("b"), Conn("c")
    guard.enter(a)
    guard.enter(b)
    guard.enter(a)  # idle again after a response: now the youngest
    guard.enter(c)
    assert b.closed and not a.closed


def test_sweep_closes_only_the_connections_past_the_header_timeout() -> None:
    clock = Clock()
    guard = PendingConnections(limit=100, header_timeout=10.0, clock=clock)
    old, young = Conn("old"), Conn("young")
    guard.enter(old)
    clock.now += 6
    guard.enter(young)
    clock.now += 5  # old: 11 s, young: 5 s
    assert guard.sweep() == 1 and old.closed and not young.closed
    assert old not in guard and young in guard
    clock.now += 10
    assert guard.sweep() == 1 and young.closed and len(guard) == 0


def test_report_is_rate_limited_and_counts_since_the_last_one() -> None:
    clock = Clock()
    guard = PendingConnections(limit=1, header_timeout=1.0, clock=clock)
    for i in range(3):
        guard.enter(Conn(str(i)))
    assert guard.report() is None  # not a report interval yet
    clock.now += 11
    guard.sweep()
    summary = guard.report()
    assert summary is not None and "closed 1 connection(s)" in summary and "2 idle one(s)" in summary
    clock.now += 11
    assert guard.report() is None  # nothing new


def test_invalid_limits_are_refused() -> None:
    with pytest.raises(ValueError):
        PendingConnections(limit=0, header_timeout=1.0)


def _closed_by_peer(sock: socket.socket, wait: float) -> bool:
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except (TimeoutError, ConnectionResetError):
        return False


async def test_silent_and_slow_connections_are_closed_after_the_header_timeout() -> None:
    async with running_server(header_timeout=0.5) as server:
        silent = socket.create_connection(("127.0.0.1", server.port))
        slow = socket.create_connection(("127.0.0.1", server.port))
        slow.sendall(b"GET /api/health HT")  # a request line that never ends
        try:
            started = time.monotonic()
            assert await asyncio.to_thread(_closed_by_peer, silent, TIMEOUT)
            assert await asyncio.to_thread(_closed_by_peer, slow, TIMEOUT)
            assert time.monotonic() - started >= 0.4
        finally:
            silent.close()
            slow.close()


async def test_idle_connections_over_the_cap_cannot_starve_health_or_registration() -> None:
    async with running_server(max_pending_connections=64) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(300)]
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http:
                assert (await http.get("/api/health")).json()["status"] == "healthy"
            async with peer(server, "late-device"):
                assert server.app.state.registry.is_device_connected("late-device")
            assert server.guard is not None and len(server.guard) <= 64
            assert server.guard.evicted >= 300 - 64
        finally:
            for sock in idle:
                sock.close()


async def test_keep_alive_connection_is_served_again_and_then_pending() -> None:
    async with (
        running_server() as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        for _ in range(3):  # one connection, three requests
            assert (await http.get("/api/health")).status_code == 200
        assert server.guard is not None and len(server.guard) == 1  # idle between requests
