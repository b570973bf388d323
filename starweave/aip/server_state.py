"""The agent server's side of one AIP connection, without I/O (the sans-I/O core of ``/ws``).

:class:`ServerConnectionState` takes the frames a client sends and returns a :class:`Step`: the
messages to send back, whether to close the connection, and what happened (a registration to vet,
or a message for the server's dispatch table). It owns the rules of the connection itself: the
first message must be a REGISTER, a registered client may not change its identity or register
again, heartbeats are answered at once, and too many invalid frames in a row close the connection.
The WebSocket handler (``starweave.server.ws_handler``) only moves frames and runs the handlers,
so all of this is tested synchronously.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from starweave.aip.builders import error_message, heartbeat_ack
from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ClientType,
    ServerMessage,
    parse_client_message,
)
from starweave.errors import AIPError

__all__ = ["POLICY_VIOLATION", "Close", "Phase", "ServerConnectionState", "Step"]

# WebSocket close code 1008: what a client that breaks the protocol (or is refused) is closed with.
POLICY_VIOLATION = 1008


class Phase(StrEnum):
    """Where a connection is: waiting for its REGISTER, serving a registered client, or closed."""

    AWAITING_REGISTRATION = "awaiting_registration"
    REGISTERED = "registered"
    CLOSED = "closed"


@dataclass(frozen=True)
class Close:
    """Close the connection with this WebSocket code and reason."""

    code: int
    reason: str


@dataclass
class Step:
    """What one input produced: replies to send (in order), then maybe a close, and what happened.

    ``registration`` is a REGISTER the server must vet (then call ``accept`` and ``confirm``, or
    ``refuse``);
    ``dispatch`` a message for the server's dispatch table; ``problem`` why a frame was refused.
    """

    send: list[ServerMessage] = field(default_factory=list)
    close: Close | None = None
    registration: ClientMessage | None = None
    dispatch: ClientMessage | None = None
    problem: str | None = None


class ServerConnectionState:
    """The protocol state of one client connection on the agent server."""

    def __init__(self, max_message_bytes: int, max_bad_frames: int) -> None:
        self.max_message_bytes = max_message_bytes
        self.max_bad_frames = max_bad_frames
        self.phase = Phase.AWAITING_REGISTRATION
        self.client_id: str | None = None
        self.client_type = ClientType.DEVICE
        self.target_id: str | None = None
        self.bad_frames = 0

    @property
    def registered(self) -> bool:
        """True while a registered client is served."""
        return self.phase == Phase.REGISTERED

    # ---- input ----------------------------------------------------------------------------
    def receive_frame(self, frame: str | bytes) -> Step:
        """Handle one frame from the client (text, or bytes that must be UTF-8 JSON)."""
        if self.phase == Phase.CLOSED:
            return Step(problem="the connection is closed")
        try:
            message = self._parse(frame)
            if self.phase == Phase.REGISTERED:
                self._check_identity(message)
        except AIPError as exc:
            return self._bad_frame(str(exc))
        if self.phase == Phase.AWAITING_REGISTRATION:
            if message.type != ClientMessageType.REGISTER:
                return self.refuse("First message must be a registration message")
            return Step(registration=message)
        self.bad_frames = 0
        if message.type == ClientMessageType.HEARTBEAT:
            # The commonest message by far: answered here, without a handler of its own.
            return Step(send=[heartbeat_ack()])
        return Step(dispatch=message)

    def registration_timed_out(self) -> Step:
        """No REGISTER arrived in time."""
        return self.refuse("No registration message received in time")

    # ---- registration verdicts --------------------------------------------------------------
    def accept(self, registration: ClientMessage) -> None:
        """The server accepted ``registration``: the connection now serves that client.

        Separate from :meth:`confirm` because the confirmation may wait for I/O (a device token),
        and a connection lost meanwhile must already count as registered, to be cleaned up.
        """
        self.client_id = str(registration.client_id)
        self.client_type = registration.client_type
        self.target_id = registration.target_id
        self.phase = Phase.REGISTERED

    def confirm(self, **confirmation: Any) -> Step:
        """The answer to an accepted REGISTER: HEARTBEAT ok, carrying ``confirmation`` fields."""
        return Step(send=[heartbeat_ack(**confirmation)])

    def refuse(self, reason: str) -> Step:
        """Refuse the registration: an ERROR naming ``reason``, then close (policy violation)."""
        self.phase = Phase.CLOSED
        return Step(send=[error_message(reason)], close=Close(POLICY_VIOLATION, reason), problem=reason)

    def closed(self) -> bool:
        """Mark the connection closed; True if a registered client was served until now (once).

        This is the only way out of REGISTERED: a close decided by :meth:`receive_frame` (too many
        invalid frames) leaves the client registered until the connection has really ended, so
        whoever cleans up after it still sees it.
        """
        was_registered = self.registered
        self.phase = Phase.CLOSED
        return was_registered

    # ---- rules ------------------------------------------------------------------------------
    def _parse(self, frame: str | bytes) -> ClientMessage:
        if isinstance(frame, bytes):
            try:
                frame = frame.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise AIPError(f"Binary frame is not UTF-8 JSON: {exc.reason}") from None
        if _utf8_size_exceeds(frame, self.max_message_bytes):
            raise AIPError(f"Message exceeds the limit of {self.max_message_bytes} bytes")
        return parse_client_message(frame)

    def _check_identity(self, message: ClientMessage) -> None:
        if message.client_id is not None and message.client_id != self.client_id:
            raise AIPError(
                f"client_id '{message.client_id}' does not match this connection ('{self.client_id}')"
            )
        # Only a client_type actually sent counts: pydantic fills in "device" when it is absent.
        if "client_type" in message.model_fields_set and message.client_type != self.client_type:
            raise AIPError(f"client_type '{message.client_type.value}' does not match this connection")
        if message.type == ClientMessageType.REGISTER:
            raise AIPError(f"Client '{self.client_id}' is already registered on this connection")

    def _bad_frame(self, reason: str) -> Step:
        if self.phase == Phase.AWAITING_REGISTRATION:
            return self.refuse(f"Invalid registration message: {reason}")
        self.bad_frames += 1
        step = Step(send=[error_message(reason)], problem=reason)
        if self.bad_frames >= self.max_bad_frames:
            step.close = Close(POLICY_VIOLATION, f"Too many invalid messages ({self.bad_frames} in a row)")
        return step


def _utf8_size_exceeds(text: str, limit: int) -> bool:
    # A str has at most 4 UTF-8 bytes per character: encode only when that bound could be crossed.
    return len(text) > limit or (len(text) * 4 > limit and len(text.encode("utf-8")) > limit)
