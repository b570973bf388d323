"""AIP messages: the wire format between agent server, device clients and constellation clients.

Field for field the reference's ``aip.messages`` (spec A §1): pydantic models serialised as UTF-8
JSON with lowercase enum values. Unknown fields are kept (``extra="allow"``) so a peer's additions
survive a round trip. ``parse_client_message`` / ``parse_server_message`` validate a frame and check
the fields its type requires (``MessageValidator``), raising :class:`AIPError` with a clear reason.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from starweave.commands.models import Command, Result, ResultStatus
from starweave.errors import StarweaveError

__all__ = [
    "AIPError",
    "ClientMessage",
    "ClientMessageType",
    "ClientType",
    "Command",
    "ControlInfo",
    "MCPToolInfo",
    "MessageValidator",
    "Rect",
    "Result",
    "ResultStatus",
    "ServerMessage",
    "ServerMessageType",
    "TaskStatus",
    "WindowInfo",
    "new_id",
    "parse_client_message",
    "parse_server_message",
    "utc_now",
]


class AIPError(StarweaveError):
    """A frame is not a valid AIP message, or breaks the protocol."""


def new_id() -> str:
    """A fresh message/session id (uuid4)."""
    return str(uuid.uuid4())


def utc_now() -> str:
    """The current time, ISO 8601 in UTC."""
    return datetime.now(UTC).isoformat()


class ClientMessageType(StrEnum):
    """Client → server message types."""

    REGISTER = "register"
    HEARTBEAT = "heartbeat"
    TASK = "task"
    TASK_END = "task_end"
    COMMAND_RESULTS = "command_results"
    DEVICE_INFO_REQUEST = "device_info_request"
    DEVICE_INFO_RESPONSE = "device_info_response"
    ERROR = "error"


class ServerMessageType(StrEnum):
    """Server → client message types."""

    TASK = "task"
    COMMAND = "command"
    TASK_END = "task_end"
    HEARTBEAT = "heartbeat"
    DEVICE_INFO_REQUEST = "device_info_request"
    DEVICE_INFO_RESPONSE = "device_info_response"
    ERROR = "error"


class TaskStatus(StrEnum):
    """CONTINUE: more steps; COMPLETED/FAILED: the task ended; OK: ack/heartbeat; ERROR: protocol error."""

    CONTINUE = "continue"
    COMPLETED = "completed"
    FAILED = "failed"
    OK = "ok"
    ERROR = "error"


class ClientType(StrEnum):
    """A device (executes commands) or a constellation client (orchestrates devices)."""

    DEVICE = "device"
    CONSTELLATION = "constellation"


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Rect(_Model):
    """A rectangle in pixels, top-left origin."""

    x: int | None = None
    y: int | None = None
    width: int | None = None
    height: int | None = None


class ControlInfo(_Model):
    """A UI control as the reference describes it."""

    annotation_id: str | None = None
    name: str | None = None
    title: str | None = None
    handle: int | None = None
    class_name: str | None = None
    rectangle: Rect | None = None
    control_type: str | None = None
    automation_id: str | None = None
    is_enabled: bool | None = None
    is_visible: bool | None = None
    source: str | None = None
    text_content: str | None = None


class WindowInfo(ControlInfo):
    """A top-level window."""

    process_id: int | None = None
    process_name: str | None = None
    is_minimized: bool | None = None
    is_maximized: bool | None = None
    is_active: bool | None = None


class MCPToolInfo(_Model):
    """A tool a device offers (``tool_key`` is ``namespace.tool_name`` here, per messages.md)."""

    tool_key: str
    tool_name: str
    namespace: str
    tool_type: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None


class ClientMessage(_Model):
    """A message from a device or constellation client to the server."""

    type: ClientMessageType
    status: TaskStatus = TaskStatus.OK
    client_type: ClientType = ClientType.DEVICE
    session_id: str | None = None
    task_name: str | None = None
    client_id: str | None = None
    target_id: str | None = None
    request: str | None = None
    action_results: list[Result] | None = None
    timestamp: str | None = Field(default_factory=utc_now)
    request_id: str | None = None
    prev_response_id: str | None = None
    error: str | None = None
    metadata: dict[str, Any] | None = None
    result: Any = None


class ServerMessage(_Model):
    """A message from the server to a client."""

    type: ServerMessageType
    status: TaskStatus = TaskStatus.OK
    user_request: str | None = None
    agent_name: str | None = None
    process_name: str | None = None
    root_name: str | None = None
    actions: list[Command] | None = None
    messages: list[str] | None = None
    error: str | None = None
    session_id: str | None = None
    task_name: str | None = None
    timestamp: str | None = Field(default_factory=utc_now)
    response_id: str | None = None
    request_id: str | None = None
    result: Any = None


_CLIENT_REQUIRED: dict[ClientMessageType, tuple[str, ...]] = {
    ClientMessageType.REGISTER: ("client_id",),
    ClientMessageType.HEARTBEAT: ("client_id",),
    ClientMessageType.TASK: ("request", "client_id"),
    ClientMessageType.TASK_END: ("session_id",),
    ClientMessageType.COMMAND_RESULTS: ("action_results", "prev_response_id"),
    ClientMessageType.DEVICE_INFO_REQUEST: ("request_id",),
    ClientMessageType.ERROR: ("error",),
}
_SERVER_REQUIRED: dict[ServerMessageType, tuple[str, ...]] = {
    ServerMessageType.TASK: ("user_request", "task_name", "session_id"),
    ServerMessageType.COMMAND: ("actions", "response_id", "session_id"),
    ServerMessageType.TASK_END: ("session_id",),
    ServerMessageType.HEARTBEAT: ("response_id",),
    ServerMessageType.DEVICE_INFO_REQUEST: ("request_id",),
    ServerMessageType.ERROR: ("error",),
}


def _missing(message: BaseModel, required: tuple[str, ...]) -> list[str]:
    return [name for name in required if getattr(message, name, None) in (None, "")]


class MessageValidator:
    """The reference's static checks (each returns a bool), plus :meth:`problems` for the reason."""

    @staticmethod
    def problems(message: ClientMessage | ServerMessage) -> list[str]:
        """The required fields ``message`` lacks for its type."""
        if isinstance(message, ClientMessage):
            missing = _missing(message, _CLIENT_REQUIRED.get(message.type, ()))
            if message.type == ClientMessageType.TASK and message.client_type == ClientType.CONSTELLATION:
                missing += _missing(message, ("target_id",))
            return missing
        return _missing(message, _SERVER_REQUIRED.get(message.type, ()))

    @staticmethod
    def validate_registration(message: ClientMessage) -> bool:
        """A REGISTER with a client id."""
        return message.type == ClientMessageType.REGISTER and bool(message.client_id)

    @staticmethod
    def validate_task_request(message: ClientMessage) -> bool:
        """A TASK with a request and a client id."""
        return message.type == ClientMessageType.TASK and bool(message.request) and bool(message.client_id)

    @staticmethod
    def validate_command_results(message: ClientMessage) -> bool:
        """COMMAND_RESULTS answering a server response id."""
        return message.type == ClientMessageType.COMMAND_RESULTS and bool(message.prev_response_id)

    @staticmethod
    def validate_server_message(message: ServerMessage) -> bool:
        """A server message with a type and a status."""
        return bool(message.type) and bool(message.status)


def _parse(model: type[ClientMessage] | type[ServerMessage], frame: str | bytes) -> Any:
    try:
        message = model.model_validate_json(frame)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(message)"
        raise AIPError(f"invalid {model.__name__}: {where}: {first['msg']}") from None
    missing = MessageValidator.problems(message)
    if missing:
        raise AIPError(f"{model.__name__} of type {message.type.value!r} lacks {', '.join(missing)}")
    return message


def parse_client_message(frame: str | bytes) -> ClientMessage:
    """Validate one client frame (JSON text or UTF-8 bytes); AIPError says what is wrong."""
    message: ClientMessage = _parse(ClientMessage, frame)
    return message


def parse_server_message(frame: str | bytes) -> ServerMessage:
    """Validate one server frame (JSON text or UTF-8 bytes); AIPError says what is wrong."""
    message: ServerMessage = _parse(ServerMessage, frame)
    return message
