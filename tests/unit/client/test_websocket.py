"""DeviceWebSocketClient's reconnection logic over in-memory transports and a fake clock."""

from __future__ import annotations

import asyncio
from typing import Any

from unit.client.virtual_time import VirtualTime

from starweave.aip import builders
from starweave.aip.messages import ClientMessage, ClientMessageType, ServerMessage, ServerMessageType
from starweave.aip.protocols import AIPProtocol, RegistrationProtocol
from starweave.aip.resilience import ReconnectionPolicy, ReconnectionStrategy
from starweave.aip.transport import MemoryTransport, memory_transport_pair
from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider, SystemProbe
from starweave.client.websocket import EXIT_GAVE_UP, EXIT_OK, EXIT_REFUSED, DeviceWebSocketClient, with_token
from starweave.errors import HandshakeRejected

PROBE = DeviceInfoProvider(SystemProbe(route_ip=lambda: "10.0.0.1"))


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)


class Dialer:
    """A transport factory: each connect() fails per the script, or hands the server end to the test."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script  # per attempt: None = accept, or an exception to raise
        self.accepted: asyncio.Queue[MemoryTransport] = asyncio.Queue()
        self.urls: list[str] = []
        self.headers: list[dict[str, str]] = []

    def __call__(self) -> MemoryTransport:
        dialer = self

        class Dialled(MemoryTransport):
            async def connect(self, url: str, **kwargs: Any) -> None:
                dialer.urls.append(url)
                dialer.headers.append(dict(kwargs.get("headers") or {}))
                outcome = dialer.script.pop(0) if dialer.script else None
                if outcome is not None:
                    raise outcome
                client_end, server_end = memory_transport_pair()
                # Become the client end of a fresh pair.
                self._inbox, self.peer = client_end._inbox, server_end
                server_end.peer = self
                dialer.accepted.put_nowait(server_end)

        return Dialled()


def client_for(device: DeviceClient, dialer: Dialer, fake: FakeClock, **kwargs: Any) -> DeviceWebSocketClient:
    strategy = ReconnectionStrategy(
        max_retries=kwargs.pop("max_retries", 3),
        initial_backoff=1.0,
        jitter=0.0,
        sleep=fake.sleep,
        policy=kwargs.pop("policy", ReconnectionPolicy.EXPONENTIAL_BACKOFF),
    )
    return DeviceWebSocketClient(
        "ws://server/ws",
        device,
        reconnection_strategy=strategy,
        transport_factory=dialer,
        info_provider=PROBE,
        **kwargs,
    )


async def accept_and_confirm(dialer: Dialer) -> MemoryTransport:
    server_end = await asyncio.wait_for(dialer.accepted.get(), 10)
    protocol = AIPProtocol(server_end)
    register = await asyncio.wait_for(protocol.receive_message(ClientMessage), 10)
    assert register.type == ClientMessageType.REGISTER
    await protocol.send_message(ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="ok"))
    return server_end


def test_with_token_keeps_the_query() -> None:
    assert with_token("ws://h:5000/ws", None) == "ws://h:5000/ws"
    assert with_token("ws://h:5000/ws", "k 1") == "ws://h:5000/ws?token=k+1"
    assert with_token("ws://h/ws?a=1&token=old", "new") == "ws://h/ws?a=1&token=new"


async def test_backoff_grows_then_gives_up_with_the_last_error(device: DeviceClient) -> None:
    clock = FakeClock()
    dialer = Dialer(
        [ConnectionError("refused #1"), ConnectionError("refused #2"), ConnectionError("refused #3")]
    )
    client = client_for(device, dialer, clock)
    assert await asyncio.wait_for(client.connect_and_listen(), 10) == EXIT_GAVE_UP
    assert clock.sleeps == [1.0, 2.0] and len(dialer.urls) == 3
    assert client.last_error == "gave up after 3 failed connection attempt(s) to ws://server/ws: refused #3"


async def test_retry_count_restarts_after_a_successful_registration(device: DeviceClient) -> None:
    clock = FakeClock()
    dialer = Dialer([ConnectionError("down"), None, ConnectionError("down"), ConnectionError("down"), None])
    client = client_for(device, dialer, clock, api_key="k")
    running = asyncio.create_task(client.connect_and_listen())
    first = await accept_and_confirm(dialer)
    await first.close(1001, "restart")
    second = await accept_and_confirm(dialer)
    for _ in range(1000):
        if client.registrations == 2:
            break
        await asyncio.sleep(0.001)
    assert client.registrations == 2 and client.is_connected()
    # 1 s after the first failure; after the drop the count restarted: 1 s, 2 s, 4 s, not 2/4/8.
    assert clock.sleeps == [1.0, 1.0, 2.0, 4.0]
    assert dialer.urls[1] == "ws://server/ws?token=k" and dialer.headers[1] == {"X-API-Key": "k"}
    await client.stop()
    assert await asyncio.wait_for(running, 10) == EXIT_OK
    assert second.close_code is not None


async def test_http_403_is_fatal_at_once(device: DeviceClient) -> None:
    clock = FakeClock()
    dialer = Dialer([HandshakeRejected("server refused the WebSocket connection with HTTP 403", 403)])
    client = client_for(device, dialer, clock)
    assert await asyncio.wait_for(client.connect_and_listen(), 10) == EXIT_REFUSED
    assert clock.sleeps == [] and "check the API key" in (client.last_error or "")


async def test_policy_none_never_reconnects(device: DeviceClient) -> None:
    clock = FakeClock()
    dialer = Dialer([ConnectionError("down")])
    client = client_for(device, dialer, clock, policy=ReconnectionPolicy.NONE)
    assert await asyncio.wait_for(client.connect_and_listen(), 10) == EXIT_GAVE_UP
    assert len(dialer.urls) == 1 and clock.sleeps == []


class MovingClock(FakeClock):
    """A FakeClock whose time advances by every sleep: ``now`` is the injected clock."""

    def __init__(self) -> None:
        super().__init__()
        self.time = 0.0

    async def sleep(self, seconds: float) -> None:
        self.time += seconds
        await super().sleep(seconds)

    def now(self) -> float:
        return self.time


DUPLICATE = "Client ID 'dev-1' is already connected"


async def refuse_as_duplicate(dialer: Dialer) -> None:
    server_end = await asyncio.wait_for(dialer.accepted.get(), 10)
    protocol = RegistrationProtocol(server_end)
    await asyncio.wait_for(protocol.receive_message(ClientMessage), 10)
    await protocol.send_message(builders.error_message(DUPLICATE))
    await server_end.close(1000, "duplicate")


async def test_a_duplicate_id_is_retried_for_duplicate_wait_then_reported(device: DeviceClient) -> None:
    clock = MovingClock()
    dialer = Dialer([])
    client = client_for(device, dialer, clock, clock=clock.now, duplicate_wait=120.0)
    running = asyncio.create_task(client.connect_and_listen())
    refusals = 0
    while not running.done():
        refuser = asyncio.create_task(refuse_as_duplicate(dialer))
        await asyncio.wait({running, refuser}, return_when=asyncio.FIRST_COMPLETED)
        if refuser.done():
            await refuser
            refusals += 1
        else:
            refuser.cancel()
    assert running.result() == EXIT_GAVE_UP
    # Far past max_retries=3: attempts at t = 0, 1, 3, 7, 15, 31, 63, 123 (backoff capped at 60 s).
    assert refusals == 8 and clock.time == 123.0
    assert (client.last_error or "").startswith("client id 'dev-1' is still connected on the server; ")
    assert "--client-id" in (client.last_error or "")


async def test_a_duplicate_id_that_clears_within_the_wait_connects(device: DeviceClient) -> None:
    clock = MovingClock()
    dialer = Dialer([])
    client = client_for(device, dialer, clock, clock=clock.now, duplicate_wait=120.0)
    running = asyncio.create_task(client.connect_and_listen())
    for _ in range(5):  # two more refusals than max_retries allows
        await refuse_as_duplicate(dialer)
    await accept_and_confirm(dialer)
    for _ in range(1000):
        if client.registrations == 1:
            break
        await asyncio.sleep(0.001)
    assert client.registrations == 1 and client.is_connected()
    await client.stop()
    assert await asyncio.wait_for(running, 10) == EXIT_OK


async def test_other_refusals_still_stop_at_max_retries(device: DeviceClient) -> None:
    clock = MovingClock()
    dialer = Dialer([])
    client = client_for(device, dialer, clock, clock=clock.now, duplicate_wait=120.0)
    running = asyncio.create_task(client.connect_and_listen())
    await refuse_as_duplicate(dialer)
    for _ in range(2):  # the last refusals are not about the id: the normal limit applies
        server_end = await asyncio.wait_for(dialer.accepted.get(), 10)
        protocol = RegistrationProtocol(server_end)
        await protocol.receive_message(ClientMessage)
        await protocol.send_message(builders.error_message("Platform mismatch"))
    assert await asyncio.wait_for(running, 10) == EXIT_GAVE_UP
    assert "gave up after 3 failed connection attempt(s)" in (client.last_error or "")


async def test_a_silent_server_leads_to_a_reconnect(device: DeviceClient) -> None:
    clock = FakeClock()
    time = VirtualTime()  # the connection's: heartbeats and the dead-server watchdog
    dialer = Dialer([])
    client = client_for(device, dialer, clock, heartbeat_interval=30.0, sleep=time.sleep, clock=time.clock)
    running = asyncio.create_task(client.connect_and_listen())
    first = await accept_and_confirm(dialer)  # then never answers a heartbeat
    await time.wait_sleepers(2)
    await time.advance(91.0)  # three silent intervals
    second = await accept_and_confirm(dialer)
    assert first.close_code == 1001 and "no answer from the server" in (client.last_error or "")
    assert clock.sleeps == [1.0]  # the ordinary reconnect path after a lost registered connection
    await client.stop()
    assert await asyncio.wait_for(running, 10) == EXIT_OK
    assert second.close_code is not None
