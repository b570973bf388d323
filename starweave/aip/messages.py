"""AIP messages: the wire format between agent server, device clients and constellation clients.

Field for field the reference's ``aip.messages`` (spec A §1): pydantic models serialised as UTF-8
JSON with lowercase enum values. Unknown fields are kept (``extra="allow"``) so a peer's additions
survive a round trip. ``parse_client_message`` / ``parse_server_message`` validate a frame and check
the fields its type requires, raising :class:`AIPError` with a clear reason. Frames are parsed
through pydantic discriminated unions: one model per message type (built from the type's row in
``CLIENT_REQUIRES`` / ``SERVER_REQUIRES``), chosen by ``type``, each a subclass of ClientMessage /
ServerMessage.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from starweave.aip.tool_calls import Command, Result, ResultStatus
from starweave.errors import AIPError

__all__ = [
    "CLIENT_REQUIRES",
    "DEVICE_TOKEN_FIELD",
    "DEVICE_TOKEN_HEADER",
    "REQUEST_DEVICE_TOKEN",
    "SERVER_REQUIRES",
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
    "client_message",
    "new_id",
    "parse_client_message",
    "parse_server_message",
    "server_message",
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


# What each message type requires beyond the base model (a None or "" value counts as missing):
# one row per type. A model per type is built from its row, and frames are parsed through a pydantic
# discriminated union of those models, chosen by ``type``; each is still a ClientMessage /
# ServerMessage. Adding a message type is one enum member and one row here.
CLIENT_REQUIRES: dict[ClientMessageType, dict[str, Any]] = {
    ClientMessageType.REGISTER: {"client_id": str},  # metadata: platform, system_info, ...
    ClientMessageType.HEARTBEAT: {"client_id": str},
    ClientMessageType.TASK: {"request": str, "client_id": str},  # + target_id for a constellation
    ClientMessageType.TASK_END: {"session_id": str},
    # One Result per command of the COMMAND named by ``prev_response_id``.
    ClientMessageType.COMMAND_RESULTS: {"action_results": list[Result], "prev_response_id": str},
    ClientMessageType.DEVICE_INFO_REQUEST: {"request_id": str},
    ClientMessageType.DEVICE_INFO_RESPONSE: {},
    ClientMessageType.ERROR: {"error": str},
}
SERVER_REQUIRES: dict[ServerMessageType, dict[str, Any]] = {
    ServerMessageType.TASK: {"user_request": str, "task_name": str, "session_id": str},
    ServerMessageType.COMMAND: {"actions": list[Command], "response_id": str, "session_id": str},
    ServerMessageType.TASK_END: {"session_id": str},  # status completed or failed
    # A heartbeat ack, or (status ok) the registration confirmation.
    ServerMessageType.HEARTBEAT: {"response_id": str},
    ServerMessageType.DEVICE_INFO_REQUEST: {"request_id": str},
    ServerMessageType.DEVICE_INFO_RESPONSE: {},
    ServerMessageType.ERROR: {"error": str},
}

M = TypeVar("M", ClientMessage, ServerMessage)
K = TypeVar("K", ClientMessageType, ServerMessageType)


def _type_models(base: type[M], requires: Mapping[K, dict[str, Any]]) -> dict[K, type[M]]:
    models: dict[K, type[M]] = {}
    for kind, fields in requires.items():
        name = f"{base.__name__}_{kind.value}"
        models[kind] = create_model(  # type: ignore[call-overload]
            name,
            __base__=base,
            __doc__=f"{kind.value.upper()} {base.__name__}",
            type=(Literal[kind], kind),
            **{field_name: (annotation, ...) for field_name, annotation in fields.items()},
        )
    return models


_CLIENT_MODELS = _type_models(ClientMessage, CLIENT_REQUIRES)
_SERVER_MODELS = _type_models(ServerMessage, SERVER_REQUIRES)


def _frame_adapter(models: Iterable[type[BaseModel]]) -> TypeAdapter[Any]:
    union: Any = Union[tuple(models)]  # noqa: UP007 (a union built at run time from the table)
    return TypeAdapter(Annotated[union, Field(discriminator="type")])


_CLIENT_FRAME = _frame_adapter(_CLIENT_MODELS.values())
_SERVER_FRAME = _frame_adapter(_SERVER_MODELS.values())


def server_message(kind: ServerMessageType, **fields: Any) -> ServerMessage:
    """A server message of type ``kind``; pydantic enforces the fields that type requires.

    Every server message carries a ``response_id`` (what a client's ``prev_response_id`` points
    back to): a fresh one unless ``fields`` give one.
    """
    return _SERVER_MODELS[kind](**{**fields, "response_id": fields.get("response_id") or new_id()})


def client_message(kind: ClientMessageType, **fields: Any) -> ClientMessage:
    """A client message of type ``kind``; pydantic enforces the fields that type requires."""
    return _CLIENT_MODELS[kind](**fields)


def _missing(message: BaseModel, required: tuple[str, ...]) -> list[str]:
    return [name for name in required if getattr(message, name, None) in (None, "")]


class MessageValidator:
    """The reference's static checks (each returns a bool), plus :meth:`problems` for the reason."""

    @staticmethod
    def problems(message: ClientMessage | ServerMessage) -> list[str]:
        """The required fields ``message`` lacks for its type."""
        if isinstance(message, ClientMessage):
            missing = _missing(message, tuple(CLIENT_REQUIRES.get(message.type, ())))
            if message.type == ClientMessageType.TASK and message.client_type == ClientType.CONSTELLATION:
                missing += _missing(message, ("target_id",))
            return missing
        return _missing(message, tuple(SERVER_REQUIRES.get(message.type, ())))

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
