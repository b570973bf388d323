"""AIP transport (spec A §2): moves whole message frames, knows nothing about their content.

``Transport`` is the interface; ``WebSocketTransport`` runs it over the ``websockets`` library (client
side) and ``memory_transport_pair()`` gives two connected in-memory ends for tests, so the protocol
layers above can be exercised without sockets.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import StrEnum
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import connect
from websockets.asyncio.connection import Connection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from starweave.errors import HandshakeRejected, TransportClosed

__all__ = [
    "DEFAULT_MAX_SIZE",
    "MemoryTransport",
    "Transport",
    "TransportState",
    "WebSocketTransport",
    "memory_transport_pair",
]

log = logging.getLogger("starweave.aip.transport")

# The reference allows 100 MB frames. Our messages are commands and results (tool output is capped
# by the shell server), so 10 MB is ample, and a lower cap bounds the memory a misbehaving peer can
# make us allocate for a single frame.
DEFAULT_MAX_SIZE = 10 * 1024 * 1024


def _without_query(url: str) -> str:
    """``url`` for messages: the query may carry the API token (``?token=``), so it is dropped."""
    return urlunsplit(urlsplit(url)._replace(query=""))


class TransportState(StrEnum):
    """Where a transport is in its life; only CONNECTED may send or receive."""

    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTING = "disconnecting"
    ERROR = "error"


class Transport(ABC):
    """Sends and receives whole frames (UTF-8 JSON bytes)."""

    def __init__(self) -> None:
        self._state = TransportState.DISCONNECTED
        self.close_code: int | None = None
        self.close_reason: str = ""

    @property
    def state(self) -> TransportState:
        """The current state."""
        return self._state

    @property
    def is_connected(self) -> bool:
        """True when frames can be sent and received."""
        return self._state == TransportState.CONNECTED

    @abstractmethod
    async def connect(self, url: str, **kwargs: Any) -> None:
        """Open the connection; ConnectionError if that fails."""

    @abstractmethod
    async def send(self, data: bytes) -> None:
        """Send one frame; TransportClosed if the connection is not open."""

    @abstractmethod
    async def receive(self) -> bytes:
        """The next frame; TransportClosed when the connection closes."""

    @abstractmethod
    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection (idempotent)."""

    @abstractmethod
    async def wait_closed(self) -> None:
        """Return once the connection is closed."""

    def _closed_error(self) -> TransportClosed:
        detail = f" (code {self.close_code}{': ' + self.close_reason if self.close_reason else ''})"
        suffix = detail if self.close_code is not None else ""
        return TransportClosed(
            f"connection is {self._state.value}{suffix}", self.close_code, self.close_reason
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


class WebSocketTransport(Transport):
    """A Transport over a ``websockets`` connection: given (client or server side) or opened by connect().

    Frames are sent as WebSocket text messages (JSON is text; a FastAPI peer can ``receive_text``);
    both text and binary frames are accepted on receive.
    """

    def __init__(
        self,
        websocket: Connection | None = None,
        *,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 180.0,
        close_timeout: float = 10.0,
        max_size: int = DEFAULT_MAX_SIZE,
    ) -> None:
        super().__init__()
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.close_timeout = close_timeout
        self.max_size = max_size
        self._ws = websocket
        if websocket is not None:
            self._state = TransportState.CONNECTED

    async def connect(self, url: str, **kwargs: Any) -> None:
        """Open ``url``; ``headers`` (a mapping) are sent with the upgrade request."""
        headers: Mapping[str, str] | None = kwargs.get("headers")
        self._state = TransportState.CONNECTING
        try:
            self._ws = await connect(
                url,
                additional_headers=dict(headers or {}),
                ping_interval=self.ping_interval,
                ping_timeout=self.ping_timeout,
                close_timeout=self.close_timeout,
                max_size=self.max_size,
                open_timeout=kwargs.get("open_timeout", 10.0),
                proxy=None,
            )
        except InvalidStatus as exc:
            self._state = TransportState.ERROR
            status = exc.response.status_code
            body = exc.response.body.decode("utf-8", "replace").strip() if exc.response.body else ""
            raise HandshakeRejected(
                f"server refused the WebSocket connection with HTTP {status}{': ' + body if body else ''}",
                status,
            ) from None
        except InvalidURI as exc:
            self._state = TransportState.ERROR
            raise ConnectionError(f"invalid WebSocket URL {_without_query(url)!r}: {exc.msg}") from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            self._state = TransportState.ERROR
            raise ConnectionError(
                f"cannot connect to {_without_query(url)}: {exc or type(exc).__name__}"
            ) from None
        self._state = TransportState.CONNECTED

    def _record_close(self) -> None:
        if self._ws is not None:
            self.close_code = self._ws.close_code
            self.close_reason = self._ws.close_reason or ""
        if self._state != TransportState.ERROR:
            self._state = TransportState.DISCONNECTED

    async def send(self, data: bytes) -> None:
        """Send one frame as a text message."""
        if self._ws is None or not self.is_connected:
            raise self._closed_error()
        try:
            await self._ws.send(data.decode("utf-8"))
        except ConnectionClosed:
            self._record_close()
            raise self._closed_error() from None

    async def receive(self) -> bytes:
        """The next frame as bytes."""
        if self._ws is None or not self.is_connected:
            raise self._closed_error()
        try:
            frame = await self._ws.recv()
        except ConnectionClosed:
            self._record_close()
            raise self._closed_error() from None
        return frame.encode("utf-8") if isinstance(frame, str) else bytes(frame)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Send a close frame and wait (up to close_timeout) for the peer's."""
        if self._ws is None or self._state in (TransportState.DISCONNECTED, TransportState.DISCONNECTING):
            return
        self._state = TransportState.DISCONNECTING
        await self._ws.close(code, reason)
        self._record_close()

    async def wait_closed(self) -> None:
        """Return once the underlying connection is closed."""
        if self._ws is not None:
            await self._ws.wait_closed()


_CLOSE = object()


class MemoryTransport(Transport):
    """One end of an in-memory connection made by :func:`memory_transport_pair`."""

    def __init__(self) -> None:
        super().__init__()
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.peer: MemoryTransport | None = None
        self._closed = asyncio.Event()
        self._state = TransportState.CONNECTED
        self.sent: list[bytes] = []

    async def connect(self, url: str, **kwargs: Any) -> None:
        """Nothing to open: a pair is connected from the start."""
        if self.peer is None or self._state != TransportState.CONNECTED:
            raise self._closed_error()

    async def send(self, data: bytes) -> None:
        """Deliver ``data`` to the peer."""
        if not self.is_connected or self.peer is None:
            raise self._closed_error()
        self.sent.append(data)
        self.peer._inbox.put_nowait(data)

    async def receive(self) -> bytes:
        """The next frame from the peer; TransportClosed once either end closes."""
        if not self.is_connected and self._inbox.empty():
            raise self._closed_error()
        item = await self._inbox.get()
        if item is _CLOSE:
            self._inbox.put_nowait(_CLOSE)  # later receives fail the same way
            self._state = TransportState.DISCONNECTED
            raise self._closed_error()
        data: bytes = item
        return data

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close both ends; the peer sees ``code``/``reason`` like a WebSocket close frame."""
        if self._state == TransportState.DISCONNECTED and self.close_code is not None:
            return
        for end in (self, self.peer):
            if end is not None and end.close_code is None:
                end.close_code, end.close_reason = code, reason
                end._inbox.put_nowait(_CLOSE)
                end._closed.set()
        self._state = TransportState.DISCONNECTED
        if self.peer is not None:
            self.peer._state = TransportState.DISCONNECTED

    async def wait_closed(self) -> None:
        """Return once either end has closed."""
        await self._closed.wait()


def memory_transport_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected in-memory transports: what one sends, the other receives."""
    a, b = MemoryTransport(), MemoryTransport()
    a.peer, b.peer = b, a
    return a, b
