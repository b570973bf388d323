"""Transport pings are a connection's life: a quiet client that answers them stays registered.

The reference device client sends its AIP heartbeat only every 120 s; a server that counted AIP
frames alone dropped it between beats. Here the heartbeat timeout is short and the raw `websockets`
client never sends an AIP heartbeat; its library answers the server's pings, until it stops reading.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from unit.server.server_kit import peer, running_server

from starweave.aip.messages import ClientMessageType, ServerMessageType

KEY = "liveness-test-key"
HEARTBEAT_TIMEOUT = 1.5
SETTINGS = {"heartbeat_timeout": HEARTBEAT_TIMEOUT, "api_key": KEY, "require_key_on_loopback": True}
LIMIT = 30.0  # generous: only a failing test waits this long


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_quiet_client_that_answers_pings_stays_connected() -> None:
    async with (
        running_server(**SETTINGS) as server,
        peer(server, "dev1", token=KEY) as dev,
    ):
        registry = server.app.state.registry
        # Three heartbeat timeouts without a single AIP frame, measured by the server's own pongs.
        quiet_until = time.monotonic() + 3 * HEARTBEAT_TIMEOUT
        while time.monotonic() < quiet_until:
            pong = await dev.conn.ping()
            await asyncio.wait_for(pong, LIMIT)
            assert registry.is_device_connected("dev1")
            await asyncio.sleep(0.25)
        assert registry.list_clients() == ["dev1"]
        # And the connection still carries AIP.
        await dev.send(ClientMessageType.HEARTBEAT)
        assert (await dev.recv()).type == ServerMessageType.HEARTBEAT


async def test_client_that_stops_answering_pings_is_dropped() -> None:
    async with (
        running_server(**SETTINGS) as server,
        peer(server, "dev1", token=KEY) as dev,
    ):
        registry = server.app.state.registry
        assert registry.is_device_connected("dev1")
        # A peer whose socket is never read again answers no ping: as good as a dead link.
        dev.conn.transport.pause_reading()
        dropped_from = time.monotonic()
        await _until(lambda: not registry.is_online("dev1"), "dev1 dropped")
        assert time.monotonic() - dropped_from < LIMIT
