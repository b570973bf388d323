"""The device's side of one AIP connection, without I/O (the sans-I/O core of the device client).

:class:`DeviceConnectionState` takes the parsed :class:`ServerMessage` s a device receives (and the
outcomes of the work it started) and returns a :class:`DeviceStep`: the messages to send, and what
the I/O side must do (start a task, run a COMMAND, cancel a session's commands, answer a device
info request). It owns the rules of the connection: the registration answer (HEARTBEAT ok or
ERROR) comes first, one task runs at a time, a task starts only once its echo fits the server's
frame limit, and a TASK_END or an ERROR about the running session ends it. Out-of-order and
unexpected messages get a specific ``problem`` (and, where the server should know, an ERROR reply);
none of them can leave the device believing it has a task for ever.

``starweave.client.connection.DeviceConnection`` only reads frames, feeds them here, sends what a
step says and runs the work it names, so all of these rules are tested synchronously.

Phases: CONNECTING → REGISTERING (REGISTER sent) → IDLE (registered) ⇄ EXECUTING (a task is
running: its echo awaits the server's confirmation, or COMMAND results are pending) → DISCONNECTED.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from starweave.aip.dispatch import DispatchTable
from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES, fit_results, over_limit
from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    Result,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    new_id,
)
from starweave.aip.protocols import task_request_message

__all__ = ["DEVICE_HANDLERS", "DeviceConnectionState", "DevicePhase", "DeviceStep"]


class DevicePhase(StrEnum):
    """Where a device's connection is."""

    CONNECTING = "connecting"
    REGISTERING = "registering"
    IDLE = "idle"
    EXECUTING = "executing"
    DISCONNECTED = "disconnected"


@dataclass
class DeviceStep:
    """What one input produced: messages to send (in order), and what the I/O side must do.

    The I/O side sends ``send`` first, then does the work. ``registered`` is the HEARTBEAT ok that
    accepted the registration, ``refused`` the server's reason for refusing it. ``start`` is the
    TASK echo to send once the device is reset for the task; ``run`` a COMMAND to execute;
    ``cancel`` a session whose running commands must stop; ``info_request`` a DEVICE_INFO_REQUEST
    to answer; ``ended`` the TASK_END or terminal COMMAND that ended the running task.
    ``problem`` says why a message was refused or ignored.
    """

    # The registration's answer.
    registered: ServerMessage | None = None
    refused: str | None = None
    problem: str | None = None
    send: list[ClientMessage] = field(default_factory=list)
    # The work the I/O side must start or stop.
    start: ClientMessage | None = None
    run: ServerMessage | None = None
    cancel: str | None = None
    info_request: ServerMessage | None = None
    ended: ServerMessage | None = None


class DeviceConnectionState:
    """The protocol state of one device connection to an agent server."""

    def __init__(self, client_id: str, platform: str, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.client_id = client_id
        self.platform = platform
        self.max_frame_bytes = max_frame_bytes
        self.phase = DevicePhase.CONNECTING
        self.current_session_id: str | None = None
        # True once the server confirmed the running task (a HEARTBEAT or COMMAND for its session).
        self.start_confirmed = False
        self.pending_commands: set[str] = set()
        self.heartbeat_acks = 0
        self.ignored_tasks: list[str] = []
        self.server_errors: list[str] = []

    @property
    def registered(self) -> bool:
        """True while the server serves this device (IDLE or EXECUTING)."""
        return self.phase in (DevicePhase.IDLE, DevicePhase.EXECUTING)

    # ---- input ----------------------------------------------------------------------------
    def registration_sent(self) -> None:
        """The REGISTER is on its way: the next message must answer it."""
        self.phase = DevicePhase.REGISTERING

    def receive(self, message: ServerMessage) -> DeviceStep:
        """Handle one parsed message from the server."""
        if self.phase == DevicePhase.REGISTERING:
            return self._registration_answer(message)
        if not self.registered:
            return DeviceStep(problem=f"{message.type.value} message while {self.phase.value}; ignored")
        handler = DEVICE_HANDLERS.handler_for(message.type)
        if handler is None:
            return DeviceStep(problem=f"Ignoring unexpected {message.type.value} message")
        return handler(self, message)

    def malformed(self, reason: str) -> DeviceStep:
        """A frame that is not a valid ServerMessage: dropped, the connection goes on."""
        return DeviceStep(problem=f"Dropping a malformed message: {reason}")

    # ---- outcomes of the work a step started -----------------------------------------------
    def results_ready(self, command: ServerMessage, results: list[Result]) -> DeviceStep:
        """The COMMAND_RESULTS answering ``command`` (fitted under the frame limit).

        A COMMAND with a terminal status (completed, failed) ends its task once answered.
        """
        envelope = ClientMessage(
            type=ClientMessageType.COMMAND_RESULTS,
            status=command.status,
            session_id=command.session_id,
            client_id=self.client_id,
            prev_response_id=command.response_id or "",
            request_id=new_id(),
        )
        fitted = fit_results(envelope, results, self.max_frame_bytes)
        self.pending_commands.discard(command.response_id or "")
        step = DeviceStep(send=[envelope.model_copy(update={"action_results": fitted})])
        if command.status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
            step.ended = command
            self._clear_task(command.session_id)
        return step

    def start_failed(self, session_id: str, reason: str) -> DeviceStep:
        """The device could not start the task: the server is told, the device is free again."""
        self._clear_task(session_id)
        return DeviceStep(send=[self._error(reason, session_id)], problem=reason)

    def start_timed_out(self, session_id: str, reason: str) -> DeviceStep:
        """The server did not confirm the task in time: drop it (if it is still the unconfirmed one)."""
        if self.start_confirmed or self.current_session_id != session_id:
            return DeviceStep()
        self._clear_task(session_id)
        return DeviceStep(send=[self._error(reason, session_id)], cancel=session_id, problem=reason)

    def closed(self) -> None:
        """The connection ended: no task survives it."""
        self.phase = DevicePhase.DISCONNECTED
        self.current_session_id = None
        self.start_confirmed = False
        self.pending_commands.clear()

    # ---- transitions ------------------------------------------------------------------------
    def _registration_answer(self, message: ServerMessage) -> DeviceStep:
        if message.type == ServerMessageType.HEARTBEAT and message.status == TaskStatus.OK:
            self.phase = DevicePhase.IDLE
            return DeviceStep(registered=message)
        if message.type == ServerMessageType.ERROR:
            self.phase = DevicePhase.DISCONNECTED
            return DeviceStep(refused=message.error or "the server refused the registration")
        return DeviceStep(
            problem=f"Ignoring {message.type.value} message while waiting for the registration answer"
        )

    def _task(self, message: ServerMessage) -> DeviceStep:
        session_id = message.session_id or new_id()
        if self.current_session_id is not None:
            self.ignored_tasks.append(session_id)
            busy = (
                f"the device is busy with task {self.current_session_id}; task {session_id} was not started"
            )
            return DeviceStep(send=[self._error(busy, session_id)], problem=busy)
        task_name = message.task_name or new_id()
        echo = task_request_message(
            message.user_request or "",
            task_name,
            session_id,
            self.client_id,
            metadata={"platform": self.platform},
        )
        too_large = over_limit(echo, self.max_frame_bytes)
        if too_large:
            reason = f"task {task_name} not started: its request makes {too_large}; send a shorter request"
            return DeviceStep(send=[self._error(reason, session_id)], problem=reason)
        self.current_session_id = session_id
        self.start_confirmed = False
        self.phase = DevicePhase.EXECUTING
        return DeviceStep(start=echo)

    def _command(self, message: ServerMessage) -> DeviceStep:
        # A COMMAND runs whatever session it names: the server owns the sessions.
        self._confirm(message.session_id)
        self.pending_commands.add(message.response_id or "")
        return DeviceStep(run=message)

    def _task_end(self, message: ServerMessage) -> DeviceStep:
        session_id = message.session_id
        self._clear_task(session_id)
        return DeviceStep(ended=message, cancel=session_id)

    def _heartbeat(self, message: ServerMessage) -> DeviceStep:
        self._confirm(message.session_id)  # the server started the session of our TASK echo
        self.heartbeat_acks += 1
        return DeviceStep()

    def _server_error(self, message: ServerMessage) -> DeviceStep:
        self.server_errors.append(message.error or "")
        session_id = message.session_id
        if session_id is None or session_id != self.current_session_id:
            return DeviceStep(problem=f"Server error: {message.error}")
        # An ERROR about the running session (e.g. its TASK echo was refused) ends that task.
        self._clear_task(session_id)
        return DeviceStep(cancel=session_id, problem=f"Server error: {message.error}")

    def _device_info_request(self, message: ServerMessage) -> DeviceStep:
        return DeviceStep(info_request=message)

    # ---- helpers ----------------------------------------------------------------------------
    def _confirm(self, session_id: str | None) -> None:
        if session_id is not None and session_id == self.current_session_id:
            self.start_confirmed = True

    def _clear_task(self, session_id: str | None) -> None:
        if session_id is not None and session_id == self.current_session_id:
            self.current_session_id = None
            self.start_confirmed = False
            self.phase = DevicePhase.IDLE

    def _error(self, error: str, session_id: str | None) -> ClientMessage:
        return ClientMessage(
            type=ClientMessageType.ERROR,
            status=TaskStatus.ERROR,
            error=error,
            client_id=self.client_id,
            session_id=session_id,
        )


# The device side's dispatch table: what the server may send a registered device, and its transition.
DeviceHandler = Callable[[DeviceConnectionState, ServerMessage], DeviceStep]
DEVICE_HANDLERS: DispatchTable[ServerMessageType, DeviceHandler] = DispatchTable(
    {
        ServerMessageType.TASK: DeviceConnectionState._task,
        ServerMessageType.COMMAND: DeviceConnectionState._command,
        ServerMessageType.TASK_END: DeviceConnectionState._task_end,
        ServerMessageType.HEARTBEAT: DeviceConnectionState._heartbeat,
        ServerMessageType.ERROR: DeviceConnectionState._server_error,
        ServerMessageType.DEVICE_INFO_REQUEST: DeviceConnectionState._device_info_request,
    }
)
