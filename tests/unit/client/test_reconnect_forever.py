"""The client keeps reconnecting until stopped, and keeps the device token it was issued.

The 5-minute outage runs on simulated time: the strategy's sleep moves the clock, each connection
attempt fails until the server is "back", and the test checks the schedule and that the client is
back within one backoff period.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from unit.client.test_websocket import PROBE, Dialer
from unit.client.virtual_time import until

from starweave.aip.messages import (
    DEVICE_TOKEN_HEADER,
    ClientMessage,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
)
from starweave.aip.protocols import AIPProtocol
from starweave.aip.resilience import ReconnectionStrategy
from starweave.aip.transport import MemoryTransport
from starweave.client.credentials import TokenStore, server_key
from starweave.client.device_client import DeviceClient
from starweave.client.websocket import EXIT_OK, DeviceWebSocketClient

OUTAGE = 300.0
CAP = 30.0


class SimulatedTime:
    """The strategy's sleep: advances the clock instead of waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


class OutageDialer(Dialer):
    """Refuses every connection while the simulated server is down."""

    def __init__(self, clock: SimulatedTime, down_until: float) -> None:
        super().__init__([])
        self.clock = clock
        self.down_until = down_until
        self.attempt_times: list[float] = []

    def __call__(self) -> MemoryTransport:
        self.attempt_times.append(self.clock.now)
        if self.clock.now < self.down_until:
            self.script.append(ConnectionRefusedError("[Errno 111] Connection refused"))
        return super().__call__()


async def _confirm(dialer: Dialer, **extra: Any) -> tuple[MemoryTransport, ClientMessage]:
    server_end = await asyncio.wait_for(dialer.accepted.get(), 30)
    protocol = AIPProtocol(server_end)
    register = await asyncio.wait_for(protocol.receive_message(ClientMessage), 30)
    await protocol.send_message(
        ServerMessage(type=ServerMessageType.HEARTBEAT, status=TaskStatus.OK, response_id="ok", **extra)
    )
    return server_end, register


async def test_a_five_minute_outage_is_retried_for_ever_and_recovered_within_one_backoff(
    device: DeviceClient, caplog: pytest.LogCaptureFixture
) -> None:
    clock = SimulatedTime()
    dialer = OutageDialer(clock, down_until=OUTAGE)
    strategy = ReconnectionStrategy(max_retries=None, initial_backoff=1.0, max_backoff=CAP, sleep=clock.sleep)
    client = DeviceWebSocketClient(
        "ws://server/ws",
        device,
        reconnection_strategy=strategy,
        transport_factory=dialer,
        info_provider=PROBE,
    )
    caplog.set_level(logging.WARNING, logger="starweave.client")
    running = asyncio.create_task(client.connect_and_listen())
    await _confirm(dialer)
    assert not running.done()
    back = clock.now
    # Exponential, capped, never above the cap; the first attempt after the outage connected.
    assert max(clock.sleeps) <= CAP and clock.sleeps[:3] == pytest.approx([1.0, 2.0, 4.0], rel=0.11)
    assert back - OUTAGE <= CAP
    failed = [t for t in dialer.attempt_times if t < OUTAGE]
    assert len(failed) >= 12  # ~5 before the cap, then one per 30 s
    retries = [r.getMessage() for r in caplog.records if "Server unreachable" in r.getMessage()]
    assert len(retries) == len(failed)  # one line before each further attempt
    assert "Connection refused" in retries[-1] and f"(attempt {len(failed) + 1})" in retries[-1]
    await until(lambda: "Connected to ws://server/ws again" in caplog.text, "the reconnection line")
    await client.stop()
    assert await asyncio.wait_for(running, 30) == EXIT_OK


def test_the_backoff_schedule_over_five_minutes_is_capped_with_jitter() -> None:
    strategy = ReconnectionStrategy(max_retries=None, initial_backoff=1.0, max_backoff=CAP, jitter=0.1)
    elapsed, attempt, delays = 0.0, 0, []
    while elapsed < OUTAGE:
        attempt += 1
        delay = strategy.delay(attempt)
        delays.append(delay)
        elapsed += delay
    assert strategy.should_retry(10**6)
    assert all(0 <= d <= CAP for d in delays) and max(delays) >= 0.9 * CAP
    assert 12 <= attempt <= 20


async def test_the_issued_token_is_stored_and_presented_on_the_next_connection(
    device: DeviceClient, tmp_path: Path
) -> None:
    clock = SimulatedTime()
    dialer = Dialer([])
    store = TokenStore(tmp_path / "state")
    strategy = ReconnectionStrategy(max_retries=None, initial_backoff=1.0, sleep=clock.sleep)
    client = DeviceWebSocketClient(
        "ws://server:5000/ws",
        device,
        reconnection_strategy=strategy,
        transport_factory=dialer,
        info_provider=PROBE,
        token_store=store,
    )
    running = asyncio.create_task(client.connect_and_listen())
    first, register = await _confirm(dialer, device_token="swd_issued")
    assert (register.metadata or {}).get("request_device_token") is True
    assert DEVICE_TOKEN_HEADER not in dialer.headers[0]
    await first.close(1001, "restart")
    await _confirm(dialer)
    assert dialer.headers[1][DEVICE_TOKEN_HEADER] == "swd_issued"
    assert await TokenStore(tmp_path / "state").get("server:5000", "dev-1") == "swd_issued"
    assert store.path is not None and stat.S_IMODE(store.path.stat().st_mode) == 0o600
    await client.stop()
    assert await asyncio.wait_for(running, 30) == EXIT_OK


async def test_clients_sharing_a_state_folder_keep_each_others_tokens(tmp_path: Path) -> None:
    stores = [TokenStore(tmp_path) for _ in range(8)]
    await asyncio.gather(*(s.put("h:1", f"dev{i}", f"tok{i}") for i, s in enumerate(stores)))
    fresh = TokenStore(tmp_path)
    assert [await fresh.get("h:1", f"dev{i}") for i in range(8)] == [f"tok{i}" for i in range(8)]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


async def test_a_damaged_token_file_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "device_tokens.json").write_text("{broken")
    assert await TokenStore(tmp_path).get("h:1", "dev") is None
    assert "damaged" in caplog.text
    memory = TokenStore()
    await memory.put("h:1", "dev", "t")
    assert await memory.get("h:1", "dev") == "t" and memory.path is None


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("ws://Example.org/ws", "example.org:80"),
        ("wss://example.org/ws", "example.org:443"),
        ("ws://127.0.0.1:5000/ws?token=x", "127.0.0.1:5000"),
        ("ws://[::1]:7/ws", "[::1]:7"),
    ],
)
def test_server_key(url: str, key: str) -> None:
    assert server_key(url) == key
