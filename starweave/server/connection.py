"""The per-connection state of one WebSocket client.

Each connection gets its own context, passed to every handler call. The reference kept transport
and protocols on the one shared handler, so a second connection stole the first one's replies.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from fastapi import WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES
from starweave.aip.messages import ClientType, ServerMessage
from starweave.aip.server_state import ServerConnectionState
from starweave.server.security import WsAccess
from starweave.server.settings import DEFAULT_MAX_BAD_FRAMES

logger = logging.getLogger(__name__)

CLOSE_TIMEOUT = 2.0
DEFAULT_MAX_INFLIGHT = 64


def _default_state() -> ServerConnectionState:
    return ServerConnectionState(DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_BAD_FRAMES)


@dataclass(eq=False)  # identity semantics: contexts live in sets
class ConnectionContext:
    """One client connection: its socket, its protocol state (identity once registered)."""

    websocket: WebSocket
    state: ServerConnectionState = field(default_factory=_default_state)
    closed: bool = False
    # What the handshake proved (shared key, device tokens); set before registration.
    access: WsAccess | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    max_inflight: int = DEFAULT_MAX_INFLIGHT
    _send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _inflight: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self._inflight = asyncio.Semaphore(self.max_inflight)

    @property
    def client_id(self) -> str | None:
        """The registered client's id (None before registration)."""
        return self.state.client_id

    @property
    def client_type(self) -> ClientType:
        """The registered client's type."""
        return self.state.client_type

    @property
    def target_id(self) -> str | None:
        """The device a constellation client registered for."""
        return self.state.target_id

    @property
    def label(self) -> str:
        """A name for logs."""
        return self.client_id or "(unregistered)"

    async def send(self, message: ServerMessage) -> None:
        """Send one message; raises ConnectionError when the connection is gone.

        Sends are serialised so frames from concurrent handler tasks never interleave.
        """
        if self.closed or self.websocket.application_state != WebSocketState.CONNECTED:
            raise ConnectionError(f"Connection to {self.label} is closed")
        payload = message.model_dump_json(exclude_none=True)
        async with self._send_lock:
            try:
                await self.websocket.send_text(payload)
            except (WebSocketDisconnect, RuntimeError, OSError) as exc:
                self.closed = True
                raise ConnectionError(f"Connection to {self.label} is closed: {exc}") from exc

    async def send_quiet(self, message: ServerMessage) -> bool:
        """Send, logging instead of raising when the peer is gone; True when sent."""
        try:
            await self.send(message)
        except ConnectionError as exc:
            logger.debug("[WS] dropping %s for %s: %s", message.type.value, self.label, exc)
            return False
        return True

    async def close(self, code: int, reason: str) -> None:
        """Close the socket once (later calls do nothing)."""
        if self.closed:
            return
        self.closed = True
        if self.websocket.application_state != WebSocketState.CONNECTED:
            return
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await self.websocket.close(code=code, reason=reason[:120])
        except (WebSocketDisconnect, RuntimeError, OSError, TimeoutError) as exc:
            logger.debug("[WS] close of %s failed: %s", self.label, exc)

    async def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run a handler coroutine in its own task, kept until it ends.

        Waits while ``max_inflight`` handlers of this connection run, so the caller (the reader)
        stops reading: a peer flooding messages without reading replies cannot pile up tasks.
        """
        try:
            await self._inflight.acquire()
        except asyncio.CancelledError:
            coro.close()  # never started; close it so it is not reported as never awaited
            raise
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self._inflight.release()
