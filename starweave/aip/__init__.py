"""The Agent Interaction Protocol: messages, transport, protocols, resilience, endpoints."""

from starweave.aip.messages import (
    AIPError,
    ClientMessage,
    ClientMessageType,
    ClientType,
    MessageValidator,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    parse_client_message,
    parse_server_message,
)

__all__ = [
    "AIPError",
    "ClientMessage",
    "ClientMessageType",
    "ClientType",
    "MessageValidator",
    "ServerMessage",
    "ServerMessageType",
    "TaskStatus",
    "parse_client_message",
    "parse_server_message",
]
