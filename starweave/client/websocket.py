"""The device's WebSocket loop (the reference's UFOWebSocketClient / DeviceClientEndpoint, spec A §6.2).

Connect → register → serve (receive + heartbeat) → on loss, back off and reconnect. With the
strategy's ``max_retries=None`` (``starweave client``'s default) it reconnects for ever, with capped
exponential backoff and jitter, saying so in the log at each attempt, until :meth:`stop`; a number
gives up after that many failed attempts in a row (the count restarts after every successful
registration). A refusal about credentials is never retried. A refusal because this client id is
still connected (the server keeps a half-open connection until its heartbeat timeout, 90 s by
default) is retried for ``duplicate_wait`` seconds even past max_retries.

A server that binds device ids issues a token at the first registration; it is kept in the
TokenStore and presented on every later connection (``X-Starweave-Device-Token``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES
from starweave.aip.messages import DEVICE_TOKEN_HEADER
from starweave.aip.resilience import ReconnectionPolicy, ReconnectionStrategy, Sleep
from starweave.aip.transport import Transport, WebSocketTransport
from starweave.client.connection import (
    DEFAULT_TASK_START_TIMEOUT,
    ConnectionSettings,
    DeviceConnection,
    is_duplicate_refusal,
)
from starweave.client.credentials import TokenStore, server_key
from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider
from starweave.errors import HandshakeRejected, RegistrationRefused
from starweave.server.local_token import read_local_token

__all__ = [
    "EXIT_GAVE_UP",
    "EXIT_OK",
    "EXIT_REFUSED",
    "DeviceWebSocketClient",
    "with_token",
]

log = logging.getLogger("starweave.client")

EXIT_OK = 0
EXIT_GAVE_UP = 1
EXIT_REFUSED = 3


def with_token(url: str, api_key: str | None) -> str:
    """``url`` with ``?token=KEY`` added (existing query parameters kept)."""
    if not api_key:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "token"]
    query.append(("token", api_key))
    return urlunsplit(parts._replace(query=urlencode(query)))


class DeviceWebSocketClient:
    """Keeps one device connected to an agent server until stopped or out of retries.

    ``connect_and_listen()`` returns the process exit code: 0 after :meth:`stop`, EXIT_GAVE_UP when
    the retries are used up, EXIT_REFUSED when the server refused the credentials. ``last_error``
    says why, in the server's words where it gave any.
    """

    def __init__(
        self,
        ws_url: str,
        device_client: DeviceClient,
        *,
        api_key: str | None = None,
        local_token: bool = False,
        max_retries: int = 5,
        heartbeat_interval: float = 30.0,
        reconnection_strategy: ReconnectionStrategy | None = None,
        info_provider: DeviceInfoProvider | None = None,
        registration_timeout: float = 30.0,
        transport_factory: Callable[[], Transport] = WebSocketTransport,
        duplicate_wait: float = 120.0,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        token_store: TokenStore | None = None,
        task_start_timeout: float = DEFAULT_TASK_START_TIMEOUT,
    ) -> None:
        self.ws_url = ws_url
        self.device_client = device_client
        self.api_key = api_key
        # Without a key: the local token of a server of this user's on loopback, read at every
        # attempt (a restarted server has a new one).
        self.local_token = local_token and not api_key
        self.strategy = reconnection_strategy or ReconnectionStrategy(max_retries=max_retries)
        # Every connection this client opens runs with these.
        self.settings = ConnectionSettings(
            heartbeat_interval=heartbeat_interval,
            registration_timeout=registration_timeout,
            task_start_timeout=task_start_timeout,
            max_frame_bytes=max_frame_bytes,
            info_provider=info_provider or DeviceInfoProvider(),
            sleep=sleep,
            clock=clock,
        )
        self.transport_factory = transport_factory
        self.duplicate_wait = duplicate_wait
        self.token_store = token_store if token_store is not None else TokenStore()
        # The connection's time also measures the duplicate-id wait. The backoff sleeps are the
        # strategy's.
        self._clock = clock
        self._duplicate_since: float | None = None  # first "id already connected" refusal in a row
        self.last_error: str | None = None
        self.registrations = 0
        self.connection: DeviceConnection | None = None
        self._transport: Transport | None = None
        self._stop = asyncio.Event()

    @property
    def max_attempts(self) -> int | None:
        """Connection attempts in a row before giving up (at least one); None: never give up."""
        retries = self.strategy.max_retries
        return None if retries is None else max(1, retries)

    def _out_of_attempts(self, failures: int) -> bool:
        limit = self.max_attempts
        return limit is not None and failures >= limit

    def is_connected(self) -> bool:
        """True while registered on an open connection."""
        conn = self.connection
        return conn is not None and conn.state.registered and conn.transport.is_connected

    async def stop(self) -> None:
        """Stop reconnecting and close the current connection."""
        self._stop.set()
        if self._transport is not None:
            await self._transport.close(1000, "client stopping")

    async def connect_and_listen(self) -> int:
        """Run until stopped, refused or out of retries; returns the exit code."""
        failures = 0  # failed attempts since the last successful registration (for giving up)
        setbacks = 0  # failures plus a lost registered connection (for the backoff)
        while not self._stop.is_set():
            if (
                self._out_of_attempts(failures)
                or (failures and self.strategy.policy == ReconnectionPolicy.NONE)
            ) and not self._waiting_for_stale_id():
                log.error("[WS] Max retries reached. Exiting.")
                self.last_error = self._give_up_reason(failures)
                return EXIT_GAVE_UP
            if setbacks and self.strategy.policy == ReconnectionPolicy.NONE:
                return EXIT_GAVE_UP
            if setbacks:
                delay = self.strategy.delay(setbacks)
                self._announce_retry(failures, delay)
                if await self._wait_or_stop(delay):
                    break
            limit = self.max_attempts
            log.info(
                "[WS] Connecting to %s (attempt %d%s)",
                _without_query(self.ws_url),
                failures + 1,
                f"/{limit}" if limit is not None else "",
            )
            try:
                await self._connect_once()
            except RegistrationRefused as exc:
                self.last_error = exc.reason
                log.error("[WS] %s", exc.reason)
                if exc.fatal:
                    return EXIT_REFUSED
                if is_duplicate_refusal(exc.reason):
                    if self._duplicate_since is None:
                        self._duplicate_since = self._clock()
                else:
                    self._duplicate_since = None
                failures += 1
                setbacks += 1
                continue
            except HandshakeRejected as exc:
                self._duplicate_since = None
                self.last_error = str(exc)
                log.error("[WS] %s", exc)
                if exc.status_code in (401, 403):
                    self.last_error = f"{exc}; check the API key"
                    return EXIT_REFUSED
                failures += 1
                setbacks += 1
                continue
            except ConnectionError as exc:
                self._duplicate_since = None
                self.last_error = str(exc) or type(exc).__name__
                log.warning("[WS] Connection failed: %s", self.last_error)
                failures += 1
                setbacks += 1
                continue
            # Registered and served until the connection dropped: the retry count starts afresh.
            self._duplicate_since = None
            failures = 0
            setbacks = 1
        return EXIT_OK

    def _announce_retry(self, failures: int, delay: float) -> None:
        """One log line per attempt: why, how long until the next one, and which one it is."""
        if failures == 0:
            log.warning(
                "[WS] Connection to the server lost (%s); reconnecting in %.1fs", self.last_error, delay
            )
            return
        log.warning(
            "[WS] Server unreachable (%s); retrying in %.1fs (attempt %d%s)",
            self.last_error or "unknown error",
            delay,
            failures + 1,
            f" of {self.max_attempts}" if self.max_attempts is not None else "",
        )

    def _waiting_for_stale_id(self) -> bool:
        """True while the last refusals were "id already connected" for less than duplicate_wait."""
        if self._duplicate_since is None or self.strategy.policy == ReconnectionPolicy.NONE:
            return False
        waited = self._clock() - self._duplicate_since
        if waited < self.duplicate_wait:
            log.info(
                "[WS] Client id %s is still connected on the server (probably a stale connection); "
                "retrying for up to %.0fs more",
                self.device_client.client_id,
                self.duplicate_wait - waited,
            )
            return True
        return False

    def _give_up_reason(self, failures: int) -> str:
        if self._duplicate_since is not None:
            waited = self._clock() - self._duplicate_since
            client_id = self.device_client.client_id
            return (
                f"client id {client_id!r} is still connected on the server; gave up after waiting "
                f"{waited:.0f}s ({failures} attempts) for the server to drop the old connection. "
                "Stop the other client using this id, or start this one with a different --client-id"
            )
        return (
            f"gave up after {failures} failed connection attempt(s) to {self.ws_url}: "
            f"{self.last_error or 'unknown error'}"
        )

    async def _connect_once(self) -> None:
        transport = self.transport_factory()
        self._transport = transport
        server = server_key(self.ws_url)
        client_id = self.device_client.client_id
        try:
            api_key = self.api_key
            if self.local_token:
                api_key = await asyncio.to_thread(read_local_token, self.ws_url)
            headers = {"X-API-Key": api_key} if api_key else {}
            device_token = await self.token_store.get(server, client_id)
            if device_token:
                headers[DEVICE_TOKEN_HEADER] = device_token
            await transport.connect(with_token(self.ws_url, api_key), headers=headers)
            if self._stop.is_set():  # stop() came while connecting: nothing was open to close then
                return
            connection = DeviceConnection(transport, self.device_client, self.settings)
            self.connection = connection
            await connection.register()
            self.registrations += 1
            if self.last_error:  # back after a failure: say so where the failures were reported
                log.warning(
                    "[WS] Connected to %s again, registered as %s", _without_query(self.ws_url), client_id
                )
                self.last_error = None
            if connection.issued_token:
                await self.token_store.put(server, client_id, connection.issued_token)
                where = self.token_store.path or "memory (no state folder)"
                # Only a token written to disk is the user's business (Galaxy's in-process fleet
                # keeps its tokens in memory and would print this once per device on every run).
                log.log(
                    logging.WARNING if self.token_store.path else logging.INFO,
                    "[WS] The server bound id %s to a device token of its own; kept in %s",
                    client_id,
                    where,
                )
            await connection.serve()
            code = transport.close_code
            self.last_error = connection.dead_reason or (
                f"the server closed the connection (code {code}{_reason(transport)})"
            )
            log.warning("[WS] Connection closed: %s", self.last_error)
        finally:
            self.connection = None
            self._transport = None
            await transport.close()

    async def _wait_or_stop(self, delay: float) -> bool:
        """Back off for ``delay`` via the strategy; True if stop() was called meanwhile."""
        if delay <= 0:
            return self._stop.is_set()
        waiter = asyncio.create_task(self._stop.wait())
        sleeper = asyncio.create_task(self.strategy.sleep(delay))
        _done, pending = await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return self._stop.is_set()


def _without_query(url: str) -> str:
    """``url`` for the log: the query may carry the API key (``?token=``)."""
    return urlunsplit(urlsplit(url)._replace(query=""))


def _reason(transport: Transport) -> str:
    return f": {transport.close_reason}" if transport.close_reason else ""
