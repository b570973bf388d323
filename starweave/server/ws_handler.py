"""The AIP WebSocket endpoint: registration, the receive loop, message routing and disconnects.

The protocol rules of a connection (registration first, identity, heartbeats, invalid frames) are
the sans-I/O ``ServerConnectionState``'s; this module moves its frames, vets registrations against
the registry and the credentials, and runs the handler the dispatch table names for each message.
Every incoming message is handled in its own task so a slow handler never stalls the connection.
That can reorder handling, which is harmless: COMMAND_RESULTS are matched by ``prev_response_id``
and each session waits for exactly the response ids it sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from fastapi import WebSocket

from starweave.aip.builders import device_info_response, error_message, heartbeat_ack, task_end
from starweave.aip.dispatch import DispatchTable
from starweave.aip.messages import (
    DEVICE_TOKEN_FIELD,
    REQUEST_DEVICE_TOKEN,
    ClientMessage,
    ClientMessageType,
    ClientType,
    ServerMessage,
    TaskStatus,
    new_id,
)
from starweave.aip.server_state import ServerConnectionState, Step
from starweave.errors import StarweaveError, TaskNameInUse
from starweave.server.connection import ConnectionContext
from starweave.server.dispatch_queue import DispatchQueue
from starweave.server.registry import ClientConnectionManager, resolve_platform
from starweave.server.security import (
    API_KEY_HEADER,
    DEVICE_TOKEN_HEADER,
    WS_POLICY_VIOLATION,
    WS_TOKEN_PARAM,
    AccessDenied,
    SecurityPolicy,
    ws_credentials,
)
from starweave.server.sessions import (
    CONSTELLATION_DISCONNECTED,
    DEVICE_DISCONNECTED,
    SessionManager,
    SessionRoute,
)
from starweave.server.settings import ServerSettings
from starweave.server.validation import task_name_problem

logger = logging.getLogger(__name__)


MessageHandler = Callable[["WebSocketHandler", ConnectionContext, ClientMessage], Awaitable[None]]


class WebSocketHandler:
    """Serves /ws. Shared by all connections; all per-connection state lives in ConnectionContext."""

    def __init__(
        self,
        registry: ClientConnectionManager,
        sessions: SessionManager,
        settings: ServerSettings,
        policy: SecurityPolicy,
        queue: DispatchQueue,
    ) -> None:
        self.registry = registry
        self.sessions = sessions
        self.settings = settings
        self.policy = policy
        self.queue = queue

    # ---- connection lifecycle -------------------------------------------------------------
    async def handle(self, websocket: WebSocket) -> None:
        """Run one connection from the handshake to the disconnect cleanup."""
        access = self.policy.check_ws(
            websocket.headers.get("host"),
            websocket.headers.get("origin"),
            ws_credentials(websocket.query_params.get(WS_TOKEN_PARAM), websocket.headers.get(API_KEY_HEADER)),
            websocket.headers.get(DEVICE_TOKEN_HEADER),
        )
        await websocket.accept()
        state = ServerConnectionState(self.settings.max_message_bytes, self.settings.max_bad_frames)
        ctx = ConnectionContext(websocket, state, max_inflight=self.settings.max_inflight_messages)
        if isinstance(access, AccessDenied):
            logger.warning("[WS] refused connection: %s", access.reason)
            await ctx.close(WS_POLICY_VIOLATION, access.reason)
            return
        ctx.access = access
        try:
            if not await self._register(ctx):
                return
            await self._receive_loop(ctx)
        finally:
            await self._disconnect(ctx)

    async def _receive_frame(self, ctx: ConnectionContext) -> str | bytes | None:
        """The next frame as it came (text or bytes); None when the peer disconnected."""
        message = await ctx.websocket.receive()
        if message["type"] == "websocket.disconnect":
            ctx.closed = True
            return None
        text = message.get("text")
        if text is not None:
            return str(text)
        return bytes(message.get("bytes") or b"")

    async def _perform(self, ctx: ConnectionContext, step: Step) -> None:
        """Send what the protocol state asked for, then close if it said so."""
        for reply in step.send:
            await ctx.send_quiet(reply)
        if step.close is not None:
            await ctx.close(step.close.code, step.close.reason)

    async def _register(self, ctx: ConnectionContext) -> bool:
        try:
            async with asyncio.timeout(self.settings.registration_timeout):
                frame = await self._receive_frame(ctx)
        except TimeoutError:
            await self._refuse(ctx, ctx.state.registration_timed_out())
            return False
        if frame is None:
            return False
        step = ctx.state.receive_frame(frame)
        message = step.registration
        if message is None:
            await self._refuse(ctx, step)
            return False
        client_id = str(message.client_id)
        target = message.target_id
        metadata = message.metadata or {}
        access = ctx.access
        verdict = self.policy.credentials.check_registration(
            client_id,
            set(access.proven) if access else set(),
            access.shared_key_ok if access else True,
            wants_token=message.client_type == ClientType.DEVICE
            and metadata.get(REQUEST_DEVICE_TOKEN) is True,
            as_device=message.client_type == ClientType.DEVICE,
        )
        if verdict.refusal is not None:
            await self._refuse(ctx, ctx.state.refuse(verdict.refusal))
            return False
        # After the credentials: who is online is not told to a connection that may not ask.
        if (
            message.client_type == ClientType.CONSTELLATION
            and target
            and not self.registry.is_device_connected(target)
        ):
            await self._refuse(ctx, ctx.state.refuse(f"Target device '{target}' is not connected"))
            return False
        platform = resolve_platform(metadata, self.settings.platform)
        try:
            self.registry.add_client(
                client_id,
                platform,
                ctx.websocket,
                ctx.send,
                client_type=message.client_type,
                metadata=message.metadata,
                target_id=message.target_id,
            )
        except StarweaveError as exc:  # DuplicateClientError: the existing connection stays
            await self._refuse(ctx, ctx.state.refuse(str(exc)))
            return False
        ctx.state.accept(message)
        extra: dict[str, str] = {}
        if verdict.issue_token:
            extra[DEVICE_TOKEN_FIELD] = await self.policy.credentials.issue(client_id)
        await self._perform(ctx, ctx.state.confirm(**extra))
        icon = "📱 Device" if ctx.client_type == ClientType.DEVICE else "🌟 Constellation"
        logger.info("[WS] %s client %s connected (platform %s)", icon, client_id, platform)
        return True

    async def _refuse(self, ctx: ConnectionContext, step: Step) -> None:
        logger.warning("[WS] registration refused: %s", step.problem)
        await self._perform(ctx, step)

    async def _receive_loop(self, ctx: ConnectionContext) -> None:
        while not ctx.closed:
            frame = await self._receive_frame(ctx)
            if frame is None:
                return
            step = ctx.state.receive_frame(frame)
            if step.problem is not None:
                logger.debug("[WS] bad frame from %s: %s", ctx.label, step.problem)
            if step.close is not None:
                logger.warning(
                    "[WS] closing %s: %d invalid messages in a row", ctx.label, ctx.state.bad_frames
                )
            await self._perform(ctx, step)
            if step.close is not None:
                return
            if step.dispatch is not None:
                await ctx.spawn(self._handle_message(ctx, step.dispatch))

    async def _disconnect(self, ctx: ConnectionContext) -> None:
        ctx.closed = True
        for task in list(ctx.tasks):
            task.cancel()
        if not ctx.state.closed() or ctx.client_id is None:
            return
        client_id = ctx.client_id
        # Offline first, so no new task targets this client while its sessions are cancelled.
        self.registry.remove_client(client_id)
        if ctx.client_type == ClientType.DEVICE:
            self.queue.drop_device(client_id)
            session_ids, reason = self.registry.remove_device_sessions(client_id), DEVICE_DISCONNECTED
        else:
            session_ids, reason = (
                self.registry.remove_constellation_sessions(client_id),
                CONSTELLATION_DISCONNECTED,
            )
        if session_ids:
            await asyncio.gather(*(self.sessions.cancel_task(sid, reason) for sid in session_ids))
        logger.info("[WS] %s disconnected", client_id)

    # ---- message routing ------------------------------------------------------------------
    async def _handle_message(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        try:
            await self._route(ctx, message)
        except ConnectionError as exc:  # first: TransportClosed is a StarweaveError too
            logger.debug("[WS] %s gone while handling %s: %s", ctx.label, message.type.value, exc)
        except StarweaveError as exc:
            await ctx.send_quiet(error_message(str(exc), session_id=message.session_id))
        except Exception:  # one bad message must not take the connection down
            logger.exception("[WS] error handling %s from %s", message.type.value, ctx.label)
            await ctx.send_quiet(
                error_message(
                    f"Internal server error while handling {message.type.value}",
                    session_id=message.session_id,
                )
            )

    async def _route(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        handler = SERVER_HANDLERS.handler_for(message.type)
        if handler is None:
            await ctx.send(error_message(f"Unsupported message type '{message.type.value}'"))
            return
        await handler(self, ctx, message)

    async def _handle_device_info_response(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        if ctx.client_type == ClientType.DEVICE and isinstance(message.result, dict):
            self.registry.update_device_system_info(str(ctx.client_id), message.result)

    async def _handle_client_error(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        logger.warning("[WS] error reported by %s: %s", ctx.label, message.error)
        if ctx.client_type == ClientType.DEVICE:
            self.queue.device_refused(str(ctx.client_id), message.session_id, str(message.error))

    async def _handle_task_end(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        logger.info(
            "[WS] %s reports task end of %s (%s)", ctx.label, message.session_id, message.status.value
        )

    def _task_target(self, ctx: ConnectionContext, message: ClientMessage) -> str:
        """The device a TASK runs on; raises StarweaveError when this client may not use it."""
        if ctx.client_type == ClientType.DEVICE:
            if message.target_id and message.target_id != ctx.client_id:
                raise StarweaveError(f"A device may only run tasks on itself, not on '{message.target_id}'")
            target_id = str(ctx.client_id)
        else:
            target_id = str(message.target_id)
            if ctx.target_id and target_id != ctx.target_id:
                raise StarweaveError(
                    f"This constellation client is registered for device '{ctx.target_id}' only"
                )
        if not self.registry.is_device_connected(target_id):
            raise StarweaveError(f"Target device '{target_id}' is not connected")
        return target_id

    async def _handle_task(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        target_id = self._task_target(ctx, message)
        task_name = message.task_name or new_id()
        try:
            await self._start_task(ctx, message, target_id, task_name)
        finally:
            if ctx.client_type == ClientType.DEVICE:
                # A dispatched task's echo, accepted or refused: the device's queue may move on.
                self.queue.settled(target_id, task_name)

    async def _start_task(
        self, ctx: ConnectionContext, message: ClientMessage, target_id: str, task_name: str
    ) -> None:
        target = self.registry.get_client_info(target_id)
        if target is None:
            raise StarweaveError(f"Target device '{target_id}' is not connected")
        problem = task_name_problem(task_name)
        if problem:
            raise StarweaveError(problem)
        session_id = message.session_id or new_id()
        is_constellation = ctx.client_type == ClientType.CONSTELLATION

        async def send_result(sid: str, result: ServerMessage) -> None:
            await ctx.send_quiet(result)
            if is_constellation:
                try:
                    await target.send(result)
                except ConnectionError as exc:
                    logger.debug("[WS] TASK_END of %s not delivered to %s: %s", sid, target_id, exc)

        try:
            await self.sessions.execute_task_async(
                session_id,
                task_name,
                str(message.request or ""),
                target.send,
                platform_override=target.platform,
                callback=send_result,
                route=SessionRoute(requester_id=ctx.client_id, target_device_id=target_id),
                claimant=str(ctx.client_id),
            )
        except TaskNameInUse as exc:
            # The name belongs to someone else: nothing is stored under it.
            await self._refuse_task(ctx, task_name, session_id, str(exc), None)
            return
        except StarweaveError as exc:  # capacity, session id in use, the factory refusing the task
            stored = self.sessions.record_refusal(task_name, session_id, str(exc))
            await self._refuse_task(ctx, task_name, session_id, str(exc), stored)
            return
        if is_constellation:
            self.registry.add_constellation_session(str(ctx.client_id), session_id)
        # Devices are mapped too, so a device dropping mid-task cancels its own sessions.
        self.registry.add_device_session(target_id, session_id)
        logger.info(
            "[WS] task '%s' (session %s) from %s runs on %s", task_name, session_id, ctx.label, target_id
        )
        await ctx.send(heartbeat_ack(session_id=session_id, task_name=task_name))

    async def _refuse_task(
        self,
        ctx: ConnectionContext,
        task_name: str,
        session_id: str,
        reason: str,
        end: ServerMessage | None,
    ) -> None:
        """ERROR plus TASK_END FAILED, so the requester does not wait for a session that never runs.

        No TASK_END when ``session_id`` belongs to another (live or finished) session: it would
        end that session on the device.
        """
        logger.warning(
            "[WS] task '%s' (session %s) from %s refused: %s", task_name, session_id, ctx.label, reason
        )
        await ctx.send(error_message(reason, session_id=session_id, task_name=task_name))
        if self.sessions.session_known(session_id):
            return
        await ctx.send(end or task_end(session_id, TaskStatus.FAILED, result={}, error=reason))

    async def _handle_command_results(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        session_id = message.session_id
        session = self.sessions.get_session(session_id) if session_id else None
        route = self.sessions.get_route(session_id) if session_id else None
        if session is None or route is None:
            raise StarweaveError(f"Unknown session '{session_id}': it never existed or has already ended")
        if route.target_device_id != ctx.client_id:
            raise StarweaveError(f"Session '{session_id}' does not run on this client")
        await session.set_result(str(message.prev_response_id), message)

    async def _handle_device_info_request(self, ctx: ConnectionContext, message: ClientMessage) -> None:
        device_id = str(message.target_id or ctx.target_id or ctx.client_id)
        if ctx.client_type == ClientType.CONSTELLATION and ctx.target_id and device_id != ctx.target_id:
            raise StarweaveError(f"This constellation client is registered for device '{ctx.target_id}' only")
        info = self.registry.get_client_info(device_id)
        request_id = message.request_id or ""
        if info is None or not self.registry.is_device_connected(device_id):
            reply = device_info_response(None, request_id, error=f"Device '{device_id}' is not connected")
        else:
            device_info = {"device_id": device_id, "platform": info.platform, **(info.system_info or {})}
            reply = device_info_response(device_info, request_id)
        await ctx.send(reply)


# The server side's dispatch table: what a registered client may send, and who handles it.
# REGISTER and HEARTBEAT never get here: ServerConnectionState answers them itself.
SERVER_HANDLERS: DispatchTable[ClientMessageType, MessageHandler] = DispatchTable(
    {
        ClientMessageType.TASK: WebSocketHandler._handle_task,
        ClientMessageType.COMMAND_RESULTS: WebSocketHandler._handle_command_results,
        ClientMessageType.DEVICE_INFO_REQUEST: WebSocketHandler._handle_device_info_request,
        ClientMessageType.DEVICE_INFO_RESPONSE: WebSocketHandler._handle_device_info_response,
        ClientMessageType.ERROR: WebSocketHandler._handle_client_error,
        ClientMessageType.TASK_END: WebSocketHandler._handle_task_end,
    }
)
