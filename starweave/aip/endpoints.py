"""AIP endpoints (spec A §5): the constellation side that drives devices through agent servers.

``ConstellationEndpoint`` opens one connection per device to the server that device is registered
with, as client_type constellation with ``target_id`` = the device. Tasks sent on it run on that
device; the server answers with a TASK_END per session (also when the device drops mid-task: FAILED
with the reason). Sockets come from ``transport_factory`` (WebSocketTransport by default), so all of
it runs over ``memory_transport_pair()`` in tests.

The spec's other endpoints live in the layers above (this package must not import them): the
device side is ``starweave.client.websocket.DeviceWebSocketClient`` (the spec's DeviceClientEndpoint)
and the server side ``starweave.server.ws_handler.WebSocketHandler`` (the spec's DeviceServerEndpoint).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from starweave.aip.dispatch import DispatchTable
from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES, over_limit
from starweave.aip.messages import (
    ClientType,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    new_id,
    utc_now,
)
from starweave.aip.protocols import (
    DeviceInfoProtocol,
    HeartbeatProtocol,
    RegistrationProtocol,
    task_request_message,
)
from starweave.aip.resilience import HeartbeatManager
from starweave.aip.transport import Transport, WebSocketTransport
from starweave.errors import AIPError, InvalidArgumentError, TaskRejected, TransportClosed

__all__ = [
    "ConstellationEndpoint",
    "ConstellationProtocol",
    "MessageProcessor",
]

log = logging.getLogger("starweave.aip.endpoints")

API_KEY_HEADER = "X-API-Key"


class MessageProcessor(Protocol):
    """Anything that wants to see every server message of a device connection."""

    async def process_message(self, message: ServerMessage) -> None:
        """Called for each message after the endpoint has handled it."""
        ...


class ConstellationProtocol(RegistrationProtocol, HeartbeatProtocol, DeviceInfoProtocol):
    """Every flow a constellation client speaks, over one transport (and one send lock)."""

    # Its heartbeats are tagged as constellation: the server rejects messages whose type differs.
    client_type = ClientType.CONSTELLATION


@dataclass
class _DeviceLink:
    """One registered connection to a server, on behalf of one device."""

    device_id: str
    client_id: str
    server_url: str
    transport: Transport
    protocol: ConstellationProtocol
    heartbeats: HeartbeatManager
    receiver: asyncio.Task[None] | None = None
    closing: bool = False
    tasks: dict[str, asyncio.Future[ServerMessage]] = field(default_factory=dict)
    info_requests: dict[str, asyncio.Future[dict[str, Any] | None]] = field(default_factory=dict)

    @property
    def connected(self) -> bool:
        return not self.closing and self.transport.is_connected


class ConstellationEndpoint:
    """Drives devices through agent servers: one connection per device, registered for that device.

    Connections are registered as ``"{constellation_id}@{device_id}"`` (client ids are unique per
    server, and one orchestrator may drive several devices on the same server). A lost connection
    fails the device's pending tasks with ConnectionError and calls :meth:`on_device_disconnected`;
    winning the device back is the owner's job (the Galaxy device manager reconnects with backoff,
    because it must also resume the device's queue), so the endpoint never reconnects by itself.
    """

    def __init__(
        self,
        constellation_id: str,
        task_name: str = "multi_device_task",
        api_key: str | None = None,
        heartbeat_interval: float = 30.0,
        *,
        message_processor: MessageProcessor | None = None,
        registration_timeout: float = 30.0,
        transport_factory: Callable[[], Transport] = WebSocketTransport,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        if not constellation_id:
            raise InvalidArgumentError("constellation_id must not be empty")
        if heartbeat_interval <= 0:
            raise InvalidArgumentError("heartbeat_interval must be positive")
        self.constellation_id = constellation_id
        self.task_name = task_name
        self.api_key = api_key
        self.heartbeat_interval = heartbeat_interval
        self.message_processor = message_processor
        self.registration_timeout = registration_timeout
        self.transport_factory = transport_factory
        self.max_frame_bytes = max_frame_bytes
        self._links: dict[str, _DeviceLink] = {}
        self._errors: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    # ---- connections ----------------------------------------------------------------------
    def client_id_for(self, device_id: str) -> str:
        """The client id this endpoint registers under for ``device_id``."""
        return f"{self.constellation_id}@{device_id}"

    def last_error(self, device_id: str) -> str | None:
        """Why the last connection attempt, task or info request for ``device_id`` failed."""
        return self._errors.get(device_id)

    def is_device_connected(self, device_id: str) -> bool:
        """True while the connection for ``device_id`` is registered and open."""
        link = self._links.get(device_id)
        return link is not None and link.connected

    async def connect_to_device(self, device_id: str, server_url: str) -> bool:
        """Connect to ``server_url`` (ws://HOST:PORT/ws) and register for ``device_id``.

        False, with the reason in :meth:`last_error`, when the server cannot be reached or refuses
        (typically: the device is not connected to that server, or the API key is wrong).
        """
        if not device_id:
            raise InvalidArgumentError("device_id must not be empty")
        async with self._lock(device_id):
            link = self._links.get(device_id)
            if link is not None and link.connected and link.server_url == server_url:
                return True
            if link is not None:
                await self._close_link(link, "reconnecting")
            return await self._open(device_id, server_url)

    async def _open(self, device_id: str, server_url: str) -> bool:
        transport = self.transport_factory()
        client_id = self.client_id_for(device_id)
        protocol = ConstellationProtocol(transport)
        headers = {API_KEY_HEADER: self.api_key} if self.api_key else {}
        try:
            await transport.connect(server_url, headers=headers)
            accepted = await protocol.register_as_constellation(
                client_id,
                device_id,
                {"constellation_id": self.constellation_id, "registration_time": utc_now()},
                timeout=self.registration_timeout,
            )
        except TransportClosed as exc:
            why = f" (code {exc.code}{': ' + exc.reason if exc.reason else ''})" if exc.code else ""
            return await self._refused(device_id, transport, f"the server closed the connection{why}")
        except ConnectionError as exc:
            return await self._refused(device_id, transport, str(exc) or type(exc).__name__)
        if not accepted:
            return await self._refused(device_id, transport, protocol.last_error or "registration refused")
        link = _DeviceLink(
            device_id=device_id,
            client_id=client_id,
            server_url=server_url,
            transport=transport,
            protocol=protocol,
            heartbeats=HeartbeatManager(protocol, self.heartbeat_interval),
        )
        self._links[device_id] = link
        self._errors.pop(device_id, None)
        link.heartbeats.start_heartbeat(client_id, self.heartbeat_interval)
        link.receiver = asyncio.create_task(self._receive_loop(link), name=f"constellation-{client_id}")
        log.info("🌟 %s connected to device %s via %s", client_id, device_id, server_url)
        return True

    async def _refused(self, device_id: str, transport: Transport, reason: str) -> bool:
        self._errors[device_id] = f"cannot connect to device '{device_id}': {reason}"
        log.warning("%s", self._errors[device_id])
        await transport.close()
        return False

    def _lock(self, device_id: str) -> asyncio.Lock:
        return self._locks.setdefault(device_id, asyncio.Lock())

    async def disconnect_device(self, device_id: str) -> None:
        """Close the connection for ``device_id``; its pending tasks fail with ConnectionError."""
        link = self._links.pop(device_id, None)
        if link is not None:
            await self._close_link(link, "disconnected by the constellation")

    async def stop(self) -> None:
        """Disconnect every device and stop all loops."""
        for device_id in list(self._links):
            await self.disconnect_device(device_id)

    async def _close_link(self, link: _DeviceLink, reason: str) -> None:
        link.closing = True
        link.heartbeats.stop_all()
        self._fail_pending(link, reason)
        await link.transport.close(1000, reason[:120])
        receiver = link.receiver
        if receiver is not None and receiver is not asyncio.current_task():
            receiver.cancel()
            await asyncio.gather(receiver, return_exceptions=True)

    # ---- receiving ------------------------------------------------------------------------
    async def _receive_loop(self, link: _DeviceLink) -> None:
        reason = "connection closed"
        while True:
            try:
                message = await link.protocol.receive_message(ServerMessage)
            except AIPError as exc:
                log.warning("Dropping a malformed message for device %s: %s", link.device_id, exc)
                continue
            except ConnectionError as exc:
                reason = str(exc) or type(exc).__name__
                break
            self._handle(link, message)
            if self.message_processor is not None:
                await self._process(link, message)
        link.heartbeats.stop_all()
        if link.closing:
            return
        # The dead link stays in _links (not connected) so the hook can still cancel its tasks.
        link.closing = True
        lost = f"connection to the server for device '{link.device_id}' lost: {reason}"
        self._errors[link.device_id] = lost
        log.warning("%s", lost)
        # Fail what waits on this connection now, whatever the hook does.
        self._fail_pending(link, lost)
        await self.on_device_disconnected(link.device_id)

    async def _process(self, link: _DeviceLink, message: ServerMessage) -> None:
        assert self.message_processor is not None
        try:
            await self.message_processor.process_message(message)
        # A faulty processor must not end the receive loop: pending tasks would never resolve.
        except Exception:
            log.exception("Message processor failed on %s for device %s", message.type.value, link.device_id)

    def _handle(self, link: _DeviceLink, message: ServerMessage) -> None:
        handler = CONSTELLATION_HANDLERS.handler_for(message.type)
        if handler is None:
            log.warning("Ignoring unexpected %s message for device %s", message.type.value, link.device_id)
            return
        handler(self, link, message)

    def _handle_task_end(self, link: _DeviceLink, message: ServerMessage) -> None:
        future = link.tasks.pop(message.session_id or "", None)
        if future is None:
            log.debug("TASK_END for unknown session %s", message.session_id)
        elif not future.done():
            future.set_result(message)

    def _handle_device_info(self, link: _DeviceLink, message: ServerMessage) -> None:
        info_future = link.info_requests.pop(message.request_id or "", None)
        if info_future is None or info_future.done():
            return
        if message.status == TaskStatus.ERROR or not isinstance(message.result, dict):
            self._errors[link.device_id] = f"device info request refused: {message.error or 'no info'}"
            info_future.set_result(None)
        else:
            info_future.set_result(dict(message.result))

    def _handle_heartbeat(self, link: _DeviceLink, message: ServerMessage) -> None:
        """Heartbeats are acks (of a heartbeat, or of a TASK): the receive loop already saw it alive."""

    def _handle_error(self, link: _DeviceLink, message: ServerMessage) -> None:
        error = message.error or "unspecified server error"
        future = link.tasks.pop(message.session_id or "", None)
        if future is not None:
            if not future.done():
                future.set_exception(TaskRejected(link.device_id, str(message.session_id), error))
            return
        self._errors[link.device_id] = f"server error: {error}"
        log.warning("Server error on the connection for device %s: %s", link.device_id, error)

    # ---- disconnection ------------------------------------------------------------------
    async def on_device_disconnected(self, device_id: str) -> None:
        """Called when the connection for ``device_id`` is lost (not on a deliberate disconnect).

        Default: fail the device's pending tasks. Override to tell an owner (call super() to keep
        the default): the Galaxy device manager marks the device failed and reconnects it.
        """
        await self.cancel_device_tasks(device_id, self.last_error(device_id) or "device disconnected")

    async def cancel_device_tasks(self, device_id: str, reason: str) -> None:
        """Fail every pending task and info request of ``device_id`` with ConnectionError(reason)."""
        link = self._links.get(device_id)
        if link is not None:
            self._fail_pending(link, reason)

    def _fail_pending(self, link: _DeviceLink, reason: str) -> None:
        tasks, link.tasks = link.tasks, {}
        for session_id, future in tasks.items():
            if not future.done():
                future.set_exception(ConnectionError(f"task {session_id} on '{link.device_id}': {reason}"))
        requests, link.info_requests = link.info_requests, {}
        for future_info in requests.values():
            if not future_info.done():
                future_info.set_exception(ConnectionError(reason))

    # ---- requests -------------------------------------------------------------------------
    def _require(self, device_id: str) -> _DeviceLink:
        link = self._links.get(device_id)
        if link is None or not link.connected:
            raise ConnectionError(
                f"not connected to device '{device_id}'"
                f"{': ' + self._errors[device_id] if device_id in self._errors else ''}; "
                "call connect_to_device first"
            )
        return link

    async def send_task_to_device(
        self,
        device_id: str,
        task_request: dict[str, Any],
        timeout: float | None = None,  # noqa: ASYNC109 (the spec's API; applied with asyncio.timeout)
    ) -> ServerMessage:
        """Run ``task_request`` ({request, task_name?, session_id?}) on the device; its TASK_END.

        The TASK_END may be FAILED (with ``error``, e.g. "Device disconnected before the task
        finished"). Raises TimeoutError after ``timeout`` s (None: no limit), ConnectionError when
        the connection to the server is lost, TaskRejected when the server refuses the task (or it is
        too large to send).
        """
        request = task_request.get("request")
        if not request:
            raise InvalidArgumentError("task_request needs a non-empty 'request'")
        link = self._require(device_id)
        session_id = str(task_request.get("session_id") or new_id())
        task_name = str(task_request.get("task_name") or f"{self.task_name}-{session_id}")
        if session_id in link.tasks:
            raise InvalidArgumentError(f"session '{session_id}' is already pending on device '{device_id}'")
        message = task_request_message(
            str(request),
            task_name,
            session_id,
            link.client_id,
            client_type=ClientType.CONSTELLATION,
            target_id=device_id,
            metadata={"constellation_id": self.constellation_id},
        )
        # A TASK over the server's frame limit would be answered with an ERROR the server cannot tie
        # to the task, so it is refused here instead.
        too_large = over_limit(message, self.max_frame_bytes)
        if too_large:
            reason = f"the task is {too_large}; shorten the request"
            self._errors[device_id] = reason
            raise TaskRejected(device_id, session_id, reason)
        future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
        link.tasks[session_id] = future  # before sending: the TASK_END may come back at once
        try:
            # The send is inside the limit too: a peer that stops reading must not block it forever.
            async with asyncio.timeout(timeout):
                await link.protocol.send_message(message)
                return await future
        except TimeoutError:
            self._errors[device_id] = f"task {session_id} got no TASK_END within {timeout:g}s"
            raise TimeoutError(self._errors[device_id]) from None
        except TaskRejected as exc:
            self._errors[device_id] = str(exc)
            raise
        finally:
            if link.tasks.get(session_id) is future:
                del link.tasks[session_id]

    async def request_device_info(
        self,
        device_id: str,
        timeout: float = 30.0,  # noqa: ASYNC109 (applied with asyncio.timeout)
    ) -> dict[str, Any] | None:
        """The device's system info as the server knows it; None (reason in last_error) if unavailable."""
        try:
            link = self._require(device_id)
        except ConnectionError as exc:
            self._errors[device_id] = str(exc)
            return None
        request_id = new_id()
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        link.info_requests[request_id] = future
        try:
            await link.protocol.request_device_info(link.client_id, device_id, request_id)
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            self._errors[device_id] = f"device info request got no answer within {timeout:g}s"
        except ConnectionError as exc:
            self._errors[device_id] = f"device info request failed: {exc}"
        finally:
            link.info_requests.pop(request_id, None)
        return None


# The constellation side's dispatch table: what the server sends a constellation client.
ConstellationHandler = Callable[[ConstellationEndpoint, _DeviceLink, ServerMessage], None]
CONSTELLATION_HANDLERS: DispatchTable[ServerMessageType, ConstellationHandler] = DispatchTable(
    {
        ServerMessageType.TASK_END: ConstellationEndpoint._handle_task_end,
        ServerMessageType.DEVICE_INFO_RESPONSE: ConstellationEndpoint._handle_device_info,
        ServerMessageType.ERROR: ConstellationEndpoint._handle_error,
        ServerMessageType.HEARTBEAT: ConstellationEndpoint._handle_heartbeat,
    }
)
