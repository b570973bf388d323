"""AIP protocol layer (spec A §3): typed send/receive over any Transport, plus the clients' flows.

Each protocol only builds, sends and reads messages; none of them owns a socket, so all of them run
unchanged over ``memory_transport_pair()`` in tests. The server's messages come from
``aip.builders`` (sent with :meth:`AIPProtocol.send_message`); a device's answers from its protocol
core, ``aip.device_state``.
"""

from __future__ import annotations

import asyncio
import logging
import platform as _platform
from typing import Any, TypeVar

from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ClientType,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    new_id,
    parse_client_message,
    parse_server_message,
    utc_now,
)
from starweave.aip.transport import Transport
from starweave.errors import AIPError, InvalidArgumentError

__all__ = [
    "AIPProtocol",
    "DeviceInfoProtocol",
    "HeartbeatProtocol",
    "Message",
    "ProtocolMiddleware",
    "RegistrationProtocol",
    "registration_message",
    "task_request_message",
]

log = logging.getLogger("starweave.aip.protocol")

Message = ClientMessage | ServerMessage
M = TypeVar("M", ClientMessage, ServerMessage)


class ProtocolMiddleware:
    """Transforms messages on their way out and in; the default passes them through."""

    async def process_outgoing(self, message: Message) -> Message:
        """Called before a message is serialised, in insertion order."""
        return message

    async def process_incoming(self, message: Message) -> Message:
        """Called after a frame is parsed, in reverse insertion order."""
        return message


class AIPProtocol:
    """Serialises messages onto a transport and parses what comes back.

    Routing what arrives is each receiving side's dispatch table (``aip.dispatch``), not the
    protocol's: the protocol only moves typed messages.
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.middleware_chain: list[ProtocolMiddleware] = []
        # Several tasks (heartbeat, command results) share one connection; frames must not interleave.
        self._send_lock = asyncio.Lock()

    def add_middleware(self, middleware: ProtocolMiddleware) -> None:
        """Append a middleware: it runs last on the way out and first on the way in."""
        self.middleware_chain.append(middleware)

    def is_connected(self) -> bool:
        """True while the transport is connected."""
        return self.transport.is_connected

    async def send_message(self, message: Message) -> None:
        """Run the outgoing middleware, serialise (UTF-8 JSON, no nulls) and send."""
        for middleware in self.middleware_chain:
            message = await middleware.process_outgoing(message)
        frame = message.model_dump_json(exclude_none=True).encode("utf-8")
        async with self._send_lock:
            await self.transport.send(frame)

    async def receive_message(self, message_type: type[M]) -> M:
        """Receive one frame as ``message_type``; AIPError if it is not a valid message of that kind."""
        frame = await self.transport.receive()
        parsed: Message = (
            parse_client_message(frame) if message_type is ClientMessage else parse_server_message(frame)
        )
        for middleware in reversed(self.middleware_chain):
            parsed = await middleware.process_incoming(parsed)
        if not isinstance(parsed, message_type):
            raise AIPError(f"middleware turned a {message_type.__name__} into a {type(parsed).__name__}")
        return parsed


class RegistrationProtocol(AIPProtocol):
    """REGISTER and its answer: HEARTBEAT with status ok (accepted) or ERROR (refused)."""

    def __init__(self, transport: Transport) -> None:
        super().__init__(transport)
        self.last_error: str | None = None
        # The HEARTBEAT ok that accepted the last registration (it may carry a ``device_token``).
        self.last_confirmation: ServerMessage | None = None

    async def register_as_device(
        self,
        device_id: str,
        metadata: dict[str, Any] | None = None,
        platform: str | None = None,
        timeout: float = 30.0,  # noqa: ASYNC109 (the reference's signature; applied with asyncio.timeout)
    ) -> bool:
        """Register as a device; True when the server confirms, False (reason in last_error) if not.

        ``platform`` is added to the metadata (the server reads ``metadata.platform``).
        """
        await self.send_message(registration_message(device_id, metadata, platform))
        return await self._await_confirmation(timeout)

    async def register_as_constellation(
        self,
        constellation_id: str,
        target_device: str,
        metadata: dict[str, Any] | None = None,
        timeout: float = 30.0,  # noqa: ASYNC109 (the reference's signature; applied with asyncio.timeout)
    ) -> bool:
        """Register as a constellation client for ``target_device`` (required)."""
        if not target_device:
            raise InvalidArgumentError("a constellation registration needs the target device id")
        message = ClientMessage(
            type=ClientMessageType.REGISTER,
            client_type=ClientType.CONSTELLATION,
            client_id=constellation_id,
            target_id=target_device,
            metadata=dict(metadata or {}),
            timestamp=utc_now(),
        )
        await self.send_message(message)
        return await self._await_confirmation(timeout)

    async def _await_confirmation(self, timeout: float) -> bool:  # noqa: ASYNC109
        self.last_error = None
        self.last_confirmation = None
        try:
            async with asyncio.timeout(timeout):
                while True:
                    try:
                        answer = await self.receive_message(ServerMessage)
                    except AIPError as exc:
                        log.warning("Ignoring a malformed frame while registering: %s", exc)
                        continue
                    if answer.type == ServerMessageType.HEARTBEAT and answer.status == TaskStatus.OK:
                        self.last_confirmation = answer
                        return True
                    if answer.type == ServerMessageType.ERROR:
                        self.last_error = answer.error or "the server refused the registration"
                        return False
                    log.warning("Ignoring %s message while waiting for the registration answer", answer.type)
        except TimeoutError:
            self.last_error = f"the server did not answer the registration within {timeout:g}s"
            return False


class HeartbeatProtocol(AIPProtocol):
    """HEARTBEAT from the client and its acknowledgement from the server."""

    # What the client sending the heartbeats is (a constellation client's protocol says so).
    client_type = ClientType.DEVICE

    async def send_heartbeat(self, client_id: str, metadata: dict[str, Any] | None = None) -> None:
        """Client side: one heartbeat (status ok, the default; timestamped now)."""
        heartbeat = ClientMessageType.HEARTBEAT
        await self.send_message(
            ClientMessage(
                type=heartbeat, client_type=self.client_type, client_id=client_id, metadata=metadata
            )
        )


class DeviceInfoProtocol(AIPProtocol):
    """Pull a device's telemetry: DEVICE_INFO_REQUEST → DEVICE_INFO_RESPONSE."""

    async def request_device_info(
        self, constellation_id: str, target_device: str, request_id: str | None = None
    ) -> str:
        """Ask for ``target_device``'s info; returns the request id the response will carry."""
        request_id = request_id or new_id()
        await self.send_message(
            ClientMessage(
                type=ClientMessageType.DEVICE_INFO_REQUEST,
                client_type=ClientType.CONSTELLATION,
                client_id=constellation_id,
                target_id=target_device,
                request_id=request_id,
            )
        )
        return request_id


def registration_message(
    device_id: str, metadata: dict[str, Any] | None = None, platform: str | None = None
) -> ClientMessage:
    """A device's REGISTER; ``platform`` (this machine's by default) goes into the metadata.

    The server reads ``metadata.platform`` to route the device, so it is always there.
    """
    meta = dict(metadata or {})
    meta.setdefault("platform", platform or _platform.system().lower())
    return ClientMessage(
        type=ClientMessageType.REGISTER,
        client_type=ClientType.DEVICE,
        client_id=device_id,
        metadata=meta,
        timestamp=utc_now(),
    )


def task_request_message(
    request: str,
    task_name: str,
    session_id: str | None,
    client_id: str,
    client_type: ClientType = ClientType.DEVICE,
    target_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> ClientMessage:
    """The client TASK message (built apart from sending, so a caller can check its size first)."""
    return ClientMessage(
        type=ClientMessageType.TASK,
        status=TaskStatus.CONTINUE,
        client_type=client_type,
        request=request,
        task_name=task_name,
        session_id=session_id,
        client_id=client_id,
        target_id=target_id,
        metadata=metadata,
        request_id=new_id(),
    )
