"""AIP messages: the wire format between agent server, device clients and constellation clients.

Field for field the reference's ``aip.messages`` (spec A §1): pydantic models serialised as UTF-8
JSON with lowercase enum values. Unknown fields are kept (``extra="allow"``) so a peer's additions
survive a round trip. ``parse_client_message`` / ``parse_server_message`` validate a frame and check
the fields its type requires, raising :class:`AIPError` with a clear reason. Frames are parsed
through pydantic discriminated unions (``ClientFrame``, ``ServerFrame``): one model per message
type, chosen by ``type``, each a subclass of ClientMessage / ServerMessage.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from starweave.aip.tool_calls import Command, Result, ResultStatus
from starweave.errors import AIPError

__all__ = [
    "DEVICE_TOKEN_FIELD",
    "DEVICE_TOKEN_HEADER",
    "REQUEST_DEVICE_TOKEN",
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


# Per-device credentials (Starweave's extension; reference peers ignore all three): a device asks for
# a token of its own with REGISTER ``metadata.request_device_token: true``; the server returns it in
# the registration HEARTBEAT's ``device_token`` field; the device presents it on later connections
# in the ``X-Starweave-Device-Token`` handshake header.
REQUEST_DEVICE_TOKEN = "request_device_token"
DEVICE_TOKEN_FIELD = "device_token"
DEVICE_TOKEN_HEADER = "X-Starweave-Device-Token"


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


# One model per message type, discriminated by ``type``: the parser picks the right one and
# pydantic enforces the fields that type requires. Each is still a ClientMessage / ServerMessage.


class RegisterMessage(ClientMessage):
    """REGISTER: a client announces itself (metadata: platform, system_info, ...)."""

    type: Literal[ClientMessageType.REGISTER] = ClientMessageType.REGISTER
    client_id: str


class ClientHeartbeat(ClientMessage):
    """HEARTBEAT from a client."""

    type: Literal[ClientMessageType.HEARTBEAT] = ClientMessageType.HEARTBEAT
    client_id: str


class TaskRequest(ClientMessage):
    """TASK from a client: run ``request`` (on ``target_id`` for a constellation)."""

    type: Literal[ClientMessageType.TASK] = ClientMessageType.TASK
    request: str
    client_id: str


class ClientTaskEnd(ClientMessage):
    """TASK_END from a client."""

    type: Literal[ClientMessageType.TASK_END] = ClientMessageType.TASK_END
    session_id: str


class CommandResults(ClientMessage):
    """COMMAND_RESULTS: one Result per command of the COMMAND named by ``prev_response_id``."""

    type: Literal[ClientMessageType.COMMAND_RESULTS] = ClientMessageType.COMMAND_RESULTS
    action_results: list[Result]
    prev_response_id: str


class ClientDeviceInfoRequest(ClientMessage):
    """DEVICE_INFO_REQUEST from a (constellation) client."""

    type: Literal[ClientMessageType.DEVICE_INFO_REQUEST] = ClientMessageType.DEVICE_INFO_REQUEST
    request_id: str


class ClientDeviceInfoResponse(ClientMessage):
    """DEVICE_INFO_RESPONSE from a device."""

    type: Literal[ClientMessageType.DEVICE_INFO_RESPONSE] = ClientMessageType.DEVICE_INFO_RESPONSE


class ClientError(ClientMessage):
    """ERROR from a client."""

    type: Literal[ClientMessageType.ERROR] = ClientMessageType.ERROR
    error: str


class TaskAssignment(ServerMessage):
    """TASK from the server: a dispatched request for a device."""

    type: Literal[ServerMessageType.TASK] = ServerMessageType.TASK
    user_request: str
    task_name: str
    session_id: str


class CommandMessage(ServerMessage):
    """COMMAND: tool calls for the device; answered by COMMAND_RESULTS."""

    type: Literal[ServerMessageType.COMMAND] = ServerMessageType.COMMAND
    actions: list[Command]
    response_id: str
    session_id: str


class ServerTaskEnd(ServerMessage):
    """TASK_END from the server: the session ended (status completed or failed)."""

    type: Literal[ServerMessageType.TASK_END] = ServerMessageType.TASK_END
    session_id: str


class ServerHeartbeat(ServerMessage):
    """HEARTBEAT from the server: a heartbeat ack, or the registration confirmation."""

    type: Literal[ServerMessageType.HEARTBEAT] = ServerMessageType.HEARTBEAT
    response_id: str


class ServerDeviceInfoRequest(ServerMessage):
    """DEVICE_INFO_REQUEST from the server."""

    type: Literal[ServerMessageType.DEVICE_INFO_REQUEST] = ServerMessageType.DEVICE_INFO_REQUEST
    request_id: str


class ServerDeviceInfoResponse(ServerMessage):
    """DEVICE_INFO_RESPONSE from the server."""

    type: Literal[ServerMessageType.DEVICE_INFO_RESPONSE] = ServerMessageType.DEVICE_INFO_RESPONSE


class ServerError(ServerMessage):
    """ERROR from the server."""

    type: Literal[ServerMessageType.ERROR] = ServerMessageType.ERROR
    error: str


ClientFrame = Annotated[
    RegisterMessage
    | ClientHeartbeat
    | TaskRequest
    | ClientTaskEnd
    | CommandResults
    | ClientDeviceInfoRequest
    | ClientDeviceInfoResponse
    | ClientError,
    Field(discriminator="type"),
]
ServerFrame = Annotated[
    TaskAssignment
    | CommandMessage
    | ServerTaskEnd
    | ServerHeartbeat
    | ServerDeviceInfoRequest
    | ServerDeviceInfoResponse
    | ServerError,
    Field(discriminator="type"),
]
_CLIENT_FRAME: TypeAdapter[ClientMessage] = TypeAdapter(ClientFrame)
_SERVER_FRAME: TypeAdapter[ServerMessage] = TypeAdapter(ServerFrame)


def _required_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, info in model.model_fields.items() if info.is_required())


_CLIENT_REQUIRED: dict[ClientMessageType, tuple[str, ...]] = {
    ClientMessageType(m.model_fields["type"].default): _required_fields(m)
    for m in (
        RegisterMessage,
        ClientHeartbeat,
        TaskRequest,
        ClientTaskEnd,
        CommandResults,
        ClientDeviceInfoRequest,
        ClientDeviceInfoResponse,
        ClientError,
    )
}
_SERVER_REQUIRED: dict[ServerMessageType, tuple[str, ...]] = {
    ServerMessageType(m.model_fields["type"].default): _required_fields(m)
    for m in (
        TaskAssignment,
        CommandMessage,
        ServerTaskEnd,
        ServerHeartbeat,
        ServerDeviceInfoRequest,
        ServerDeviceInfoResponse,
        ServerError,
    )
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


def _parse(adapter: TypeAdapter[Any], name: str, frame: str | bytes) -> Any:
    try:
        message = adapter.validate_json(frame)
    except ValidationError as exc:
        raise AIPError(_describe(name, exc)) from None
    missing = MessageValidator.problems(message)
    if missing:
        raise AIPError(f"{name} of type {message.type.value!r} lacks {', '.join(missing)}")
    return message


def _describe(name: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = [str(p) for p in first["loc"]]
    kind = first["type"]
    if kind == "union_tag_not_found":
        return f"invalid {name}: type: missing (every AIP message has a 'type')"
    if kind == "union_tag_invalid":
        return f"invalid {name}: type: {first['msg']}"
    if kind == "missing" and len(loc) == 2:
        return f"{name} of type {loc[0]!r} lacks {loc[1]}"
    where = ".".join(loc[1:] if len(loc) > 1 else loc) or "(message)"
    return f"invalid {name}: {where}: {first['msg']}"


def parse_client_message(frame: str | bytes) -> ClientMessage:
    """Validate one client frame (JSON text or UTF-8 bytes); AIPError says what is wrong."""
    message: ClientMessage = _parse(_CLIENT_FRAME, "ClientMessage", frame)
    return message


def parse_server_message(frame: str | bytes) -> ServerMessage:
    """Validate one server frame (JSON text or UTF-8 bytes); AIPError says what is wrong."""
    message: ServerMessage = _parse(_SERVER_FRAME, "ServerMessage", frame)
    return message
