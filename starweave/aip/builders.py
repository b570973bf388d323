"""Builders of the server's AIP messages, so every sender writes the same wire format.

Used by the agent server's handler and API, the session manager and the command dispatcher: the
server sends what these build with ``AIPProtocol.send_message`` (the protocols hold only the
clients' flows).
"""

from __future__ import annotations

from typing import Any

from starweave.aip.messages import ServerMessage, ServerMessageType, TaskStatus, server_message
from starweave.aip.tool_calls import Command


def heartbeat_ack(response_id: str | None = None, **extra: Any) -> ServerMessage:
    """HEARTBEAT ok: a heartbeat's acknowledgement, and the registration confirmation."""
    return server_message(ServerMessageType.HEARTBEAT, status=TaskStatus.OK, response_id=response_id, **extra)


def error_message(error: str, **extra: Any) -> ServerMessage:
    """ERROR with a reason (``session_id`` etc. may ride along)."""
    return server_message(ServerMessageType.ERROR, status=TaskStatus.ERROR, error=error, **extra)


def task_assignment(
    user_request: str, task_name: str, session_id: str, response_id: str | None = None, **extra: Any
) -> ServerMessage:
    """TASK for a device (what /api/dispatch sends)."""
    return server_message(
        ServerMessageType.TASK,
        status=TaskStatus.CONTINUE,
        user_request=user_request,
        task_name=task_name,
        session_id=session_id,
        response_id=response_id,
        **extra,
    )


def command_message(
    actions: list[Command],
    session_id: str,
    response_id: str | None = None,
    status: TaskStatus = TaskStatus.CONTINUE,
    **extra: Any,
) -> ServerMessage:
    """COMMAND carrying tool calls (call ids set by the caller)."""
    return server_message(
        ServerMessageType.COMMAND,
        status=status,
        actions=actions,
        session_id=session_id,
        response_id=response_id,
        **extra,
    )


def task_end(
    session_id: str, status: TaskStatus, result: Any = None, error: str | None = None, **extra: Any
) -> ServerMessage:
    """TASK_END: the session finished (completed) or not (failed)."""
    return server_message(
        ServerMessageType.TASK_END, status=status, session_id=session_id, result=result, error=error, **extra
    )


def device_info_response(
    device_info: Any, request_id: str, error: str | None = None, **extra: Any
) -> ServerMessage:
    """DEVICE_INFO_RESPONSE answering ``request_id``."""
    return server_message(
        ServerMessageType.DEVICE_INFO_RESPONSE,
        status=TaskStatus.ERROR if error else TaskStatus.OK,
        result=device_info,
        request_id=request_id,
        error=error,
        **extra,
    )
