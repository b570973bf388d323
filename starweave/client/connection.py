"""One registered connection of a device (spec A §6.2): registration, message handling, heartbeats.

``DeviceConnection`` works over any Transport, so everything here is tested over the in-memory pair;
``websocket.py`` only opens sockets and reconnects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from starweave.aip.device_state import DeviceConnectionState, DeviceStep
from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES
from starweave.aip.messages import (
    DEVICE_TOKEN_FIELD,
    REQUEST_DEVICE_TOKEN,
    ClientMessage,
    ClientMessageType,
    Result,
    ResultStatus,
    ServerMessage,
    TaskStatus,
    utc_now,
)
from starweave.aip.protocols import HeartbeatProtocol, registration_message
from starweave.aip.resilience import HeartbeatManager, Sleep
from starweave.aip.transport import Transport
from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider, DeviceSystemInfo
from starweave.errors import AIPError, RegistrationRefused, TransportClosed

__all__ = [
    "AUTH_CLOSE_CODES",
    "DEAD_SERVER_INTERVALS",
    "ConnectionSettings",
    "DeviceConnection",
    "is_auth_refusal",
    "is_duplicate_refusal",
]

log = logging.getLogger("starweave.client")

# 1008 = policy violation (what a server closes with for a bad token); 4001/4003 mirror HTTP 401/403.
AUTH_CLOSE_CODES = frozenset({1008, 4001, 4003})
# Silence from the server for this many heartbeat intervals means it is gone (half-open connection).
DEAD_SERVER_INTERVALS = 3
# A started task the server has not confirmed (ack, COMMAND, TASK_END or ERROR) by then is dropped.
DEFAULT_TASK_START_TIMEOUT = 60.0
_AUTH_WORDS = ("token", "api key", "api_key", "apikey", "unauthori", "forbidden", "authenticat", "credential")


def is_auth_refusal(reason: str) -> bool:
    """True when a refusal is about credentials: retrying cannot help."""
    text = reason.lower()
    return any(word in text for word in _AUTH_WORDS)


def is_duplicate_refusal(reason: str) -> bool:
    """True when a refusal says this client id is still connected (a stale connection on the server)."""
    return "already connected" in reason.lower()


@dataclass(frozen=True)
class ConnectionSettings:
    """How a device's connections time themselves and what they report (one set per client)."""

    heartbeat_interval: float = 30.0
    registration_timeout: float = 30.0
    task_start_timeout: float = DEFAULT_TASK_START_TIMEOUT
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    info_provider: DeviceInfoProvider = field(default_factory=DeviceInfoProvider)
    # The connection's time (heartbeats, dead-server watchdog, task-start watch); tests inject theirs.
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = time.monotonic


class DeviceConnection:
    """Registers a device on an open transport, then serves it until the connection closes.

    The rules live in the sans-I/O core (:class:`~starweave.aip.device_state.DeviceConnectionState`):
    this class reads frames, feeds them to it, sends what it answers and runs the work it names.
    One task at a time: a TASK while another runs is ignored with a warning (and an ERROR telling
    the server); an ERROR or TASK_END about the running session ends it. Nothing the server sends
    can leave the device believing it has a task for ever: a TASK whose echo would exceed the
    server's frame limit is refused at once, and a task the server does not confirm (ack, COMMAND,
    TASK_END or ERROR) within ``task_start_timeout`` is dropped. Each COMMAND runs in
    its own asyncio task (so heartbeats keep being read), in order under the client's task lock.
    A TASK_END for the running session, or the end of the connection, cancels that task's commands.
    No message from the server for DEAD_SERVER_INTERVALS heartbeat intervals closes the transport
    (``dead_reason`` says so), so the caller reconnects instead of serving a half-open connection.
    """

    def __init__(
        self, transport: Transport, device_client: DeviceClient, settings: ConnectionSettings | None = None
    ) -> None:
        self.transport = transport
        self.device_client = device_client
        self.settings = settings = settings or ConnectionSettings()
        self.state = DeviceConnectionState(
            device_client.client_id, device_client.platform, settings.max_frame_bytes
        )
        # Typed send/receive (and the heartbeats) over one transport and one send lock; what to
        # send is the core's.
        self.protocol = HeartbeatProtocol(transport)
        self.heartbeats = HeartbeatManager(self.protocol, settings.heartbeat_interval, settings.sleep)
        self.heartbeat_interval = settings.heartbeat_interval
        self._clock = settings.clock
        self._sleep = settings.sleep
        # A token of its own the server issued at this registration (the caller stores it).
        self.issued_token: str | None = None
        # Set once the running task's start is settled (confirmed, ended or dropped): ends its watch.
        self._start_settled = asyncio.Event()
        self._start_watch: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.last_server_message: float | None = None
        self.dead_reason: str | None = None
        self._starter: asyncio.Task[None] | None = None
        self._commands: dict[str | None, set[asyncio.Task[None]]] = {}

    @property
    def client_id(self) -> str:
        """This device's id."""
        return self.device_client.client_id

    async def registration_metadata(self) -> dict[str, Any]:
        """REGISTER metadata: platform, system_info and registration_time (only the time if info fails)."""
        try:
            info = await self._system_info()
        except (OSError, ValueError, TypeError, AttributeError, RuntimeError) as exc:
            log.warning("[WS] [AIP] Device info collection failed (%s); registering without it", exc)
            return {"registration_time": utc_now(), REQUEST_DEVICE_TOKEN: True}
        log.info(
            "[WS] [AIP] Collected device info: platform=%s, cpu=%s, memory=%sGB",
            info.platform,
            info.cpu_count,
            info.memory_total_gb,
        )
        return {
            "platform": self.device_client.platform,
            "system_info": info.to_dict(),
            "registration_time": utc_now(),
            # A server that binds ids answers with a token of our own (others ignore the key).
            REQUEST_DEVICE_TOKEN: True,
        }

    async def register(self) -> None:
        """Send REGISTER and wait for the answer; RegistrationRefused with the server's reason if refused."""
        metadata = await self.registration_metadata()
        log.info("[WS] [AIP] Attempting to register as %s", self.client_id)
        self.state.registration_sent()
        try:
            await self.protocol.send_message(
                registration_message(self.client_id, metadata, self.device_client.platform)
            )
            answer = await self._registration_answer()
        except TransportClosed as exc:
            if exc.code in AUTH_CLOSE_CODES:
                why = f": {exc.reason}" if exc.reason else ""
                raise RegistrationRefused(
                    f"the server closed the connection during registration (code {exc.code}{why}); "
                    "check the API key",
                    fatal=True,
                ) from None
            raise
        if answer.registered is None:
            reason = answer.refused or "the server refused the registration"
            raise RegistrationRefused(
                f"registration of {self.client_id!r} refused: {reason}", is_auth_refusal(reason)
            )
        token = (answer.registered.model_extra or {}).get(DEVICE_TOKEN_FIELD)
        if isinstance(token, str) and token:
            self.issued_token = token
        log.info("[WS] [AIP] ✅ Successfully registered as %s", self.client_id)

    async def _registration_answer(self) -> DeviceStep:
        """Feed the core until it has the registration's answer (a refusal when none comes in time)."""
        timeout = self.settings.registration_timeout
        try:
            async with asyncio.timeout(timeout):
                while True:
                    try:
                        message = await self.protocol.receive_message(ServerMessage)
                    except AIPError as exc:
                        log.warning("Ignoring a malformed frame while registering: %s", exc)
                        continue
                    step = self.state.receive(message)
                    if step.registered is not None or step.refused is not None:
                        return step
                    log.warning("%s", step.problem)
        except TimeoutError:
            return DeviceStep(refused=f"the server did not answer the registration within {timeout:g}s")

    async def serve(self) -> None:
        """Read and handle messages and send heartbeats until the connection closes."""
        self.heartbeats.start_heartbeat(self.client_id, self.heartbeat_interval)
        log.info("[WS] Heartbeat loop started (interval: %gs)", self.heartbeat_interval)
        self.last_server_message = self._clock()
        watchdog = asyncio.create_task(self._watch_server(), name=f"watchdog-{self.client_id}")
        try:
            await self.receive_loop()
        finally:
            watchdog.cancel()
            await asyncio.gather(watchdog, return_exceptions=True)
            self.heartbeats.stop_all()
            await self.cancel_all("disconnected")
            self.state.closed()

    async def _watch_server(self) -> None:
        """Close the transport once the server has been silent for DEAD_SERVER_INTERVALS intervals."""
        limit = DEAD_SERVER_INTERVALS * self.heartbeat_interval
        while True:
            await self._sleep(self.heartbeat_interval / 2)
            silent = self._clock() - (self.last_server_message or 0.0)
            if silent >= limit:
                self.dead_reason = (
                    f"no answer from the server for {silent:.1f}s ({DEAD_SERVER_INTERVALS} heartbeat "
                    "intervals); assuming the connection is dead"
                )
                log.warning("[WS] %s; reconnecting", self.dead_reason)
                await self.transport.close(1001, "server not answering heartbeats")
                return

    async def run(self) -> None:
        """Register, then serve."""
        await self.register()
        await self.serve()

    async def receive_loop(self) -> None:
        """Handle every frame; malformed ones are logged and dropped. Returns when the connection closes."""
        while True:
            try:
                message = await self.protocol.receive_message(ServerMessage)
            except AIPError as exc:
                self.last_server_message = self._clock()  # malformed, but the server is alive
                log.warning("[WS] %s", self.state.malformed(str(exc)).problem)
                continue
            except ConnectionError as exc:
                log.info("[WS] Connection closed: %s", exc)
                return
            self.last_server_message = self._clock()
            await self.handle_message(message)

    async def handle_message(self, message: ServerMessage) -> None:
        """Feed one server message to the core, then do what it says."""
        await self._apply(self.state.receive(message))

    async def _apply(self, step: DeviceStep) -> None:
        """Carry out one step of the core: send its messages, start or cancel the work it names."""
        if step.problem:
            log.warning("[WS] %s", step.problem)
        for reply in step.send:
            await self._send(reply)
        if step.ended is not None:
            ended = step.ended
            self._log_task_end(ended.session_id, ended.status, ended.result, ended.error)
        if step.cancel is not None:
            await self._cancel_session(step.cancel, "ended")
        if step.start is not None:
            self._start_settled = asyncio.Event()
            self._starter = asyncio.create_task(self._begin_task(step.start))
        if step.run is not None:
            task = asyncio.create_task(self._run_command(step.run))
            running = self._commands.setdefault(step.run.session_id, set())
            running.add(task)
            task.add_done_callback(running.discard)
        if step.info_request is not None:
            self._spawn(self._answer_device_info(step.info_request))
        if self.state.start_confirmed or self.state.current_session_id is None:
            self._start_settled.set()

    async def _begin_task(self, echo: ClientMessage) -> None:
        """Reset the device for the task, then confirm it to the server with the TASK echo."""
        session_id = str(echo.session_id)
        try:
            async with self.device_client.task_lock:
                await self.device_client.reset()
                self.device_client.session_id = session_id
                await self.protocol.send_message(echo)
            log.info("[WS] Started task %s (%s)", echo.task_name, session_id)
        except ConnectionError as exc:
            log.warning("[WS] Could not confirm task %s: %s", session_id, exc)
        except (OSError, AIPError, RuntimeError) as exc:
            await self._apply(
                self.state.start_failed(session_id, f"could not start task {echo.task_name}: {exc}")
            )
            return
        if self.state.current_session_id == session_id:
            self._start_watch = asyncio.create_task(self._watch_start(session_id, str(echo.task_name)))

    async def _watch_start(self, session_id: str, task_name: str) -> None:
        """Drop the task if the server never confirms it (its answer to the echo may have been lost)."""
        settled = asyncio.create_task(self._start_settled.wait())
        timer = asyncio.create_task(self._pause(self.settings.task_start_timeout))
        try:
            await asyncio.wait({settled, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (settled, timer):
                waiter.cancel()
            await asyncio.gather(settled, timer, return_exceptions=True)
        reason = (
            f"the server did not confirm task {task_name} within {self.settings.task_start_timeout:g}s; "
            "the device dropped it and is free for the next task"
        )
        await self._apply(self.state.start_timed_out(session_id, reason))

    async def _pause(self, seconds: float) -> None:
        await self._sleep(seconds)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _run_command(self, message: ServerMessage) -> None:
        async with self.device_client.task_lock:
            self.device_client.session_id = message.session_id
            try:
                results = await self.device_client.execute_step(message)
            # The server's session waits for an answer to every COMMAND: whatever goes wrong here
            # must come back as FAILURE results, never as silence.
            except Exception as exc:
                log.exception("[WS] Executing the commands of %s failed", message.session_id)
                error = f"the device could not execute the command: {exc or type(exc).__name__}"
                results = [
                    Result(status=ResultStatus.FAILURE, error=error, call_id=action.call_id)
                    for action in message.actions or []
                ]
        await self._apply(self.state.results_ready(message, results))

    @staticmethod
    def _log_task_end(session_id: str | None, status: TaskStatus, result: Any, error: str | None) -> None:
        if status == TaskStatus.FAILED or error:
            log.warning("[WS] Task %s failed, with error: %s", session_id, error or "(no reason given)")
        else:
            log.info("[WS] Task %s completed, result: %s", session_id, result)

    async def _cancel_session(self, session_id: str | None, reason: str) -> None:
        running = [t for t in self._commands.pop(session_id, set()) if not t.done()]
        for task in running:
            task.cancel()
        if running:
            log.info("[WS] Cancelled %d running command(s) of %s (%s)", len(running), session_id, reason)
            await asyncio.gather(*running, return_exceptions=True)

    async def cancel_all(self, reason: str) -> None:
        """Cancel the task start and every running command (task cancel on disconnect)."""
        for task in [self._starter, self._start_watch, *self._background]:
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        for session_id in list(self._commands):
            await self._cancel_session(session_id, reason)
        self.state.closed()

    async def _send(self, message: ClientMessage) -> None:
        try:
            await self.protocol.send_message(message)
        except ConnectionError as exc:
            log.warning("[WS] Could not send a %s message to the server: %s", message.type.value, exc)

    async def _system_info(self) -> DeviceSystemInfo:
        """This device's info as it announces itself (kind and capabilities: DeviceClient.describe)."""
        info = await asyncio.to_thread(self.settings.info_provider.collect_system_info, self.client_id)
        return self.device_client.describe(info)

    async def _answer_device_info(self, message: ServerMessage) -> None:
        info = await self._system_info()
        await self._send(
            ClientMessage(
                type=ClientMessageType.DEVICE_INFO_RESPONSE,
                client_id=self.client_id,
                request_id=message.request_id,
                result=info.to_dict(),
            )
        )
