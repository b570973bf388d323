"""The Agent Interaction Protocol: messages, transport, protocols, resilience, endpoints."""

from typing import TYPE_CHECKING, Any

from starweave.aip.endpoints import (
    ConstellationEndpoint,
    ConstellationProtocol,
    MessageProcessor,
    TaskRejected,
)

if TYPE_CHECKING:  # at run time these come from __getattr__ below (import cycle)
    from starweave.aip.endpoints import DeviceClientEndpoint, DeviceServerEndpoint
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
from starweave.aip.protocols import (
    AIPProtocol,
    CommandProtocol,
    DeviceInfoProtocol,
    HeartbeatProtocol,
    ProtocolMiddleware,
    RegistrationProtocol,
    TaskExecutionProtocol,
)
from starweave.aip.resilience import (
    HeartbeatManager,
    ReconnectionPolicy,
    ReconnectionStrategy,
    TimeoutManager,
)
from starweave.aip.transport import (
    HandshakeRejected,
    MemoryTransport,
    Transport,
    TransportClosed,
    TransportState,
    WebSocketTransport,
    memory_transport_pair,
)

__all__ = [
    "AIPError",
    "AIPProtocol",
    "ClientMessage",
    "ClientMessageType",
    "ClientType",
    "CommandProtocol",
    "ConstellationEndpoint",
    "ConstellationProtocol",
    "DeviceClientEndpoint",
    "DeviceInfoProtocol",
    "DeviceServerEndpoint",
    "HandshakeRejected",
    "HeartbeatManager",
    "HeartbeatProtocol",
    "MemoryTransport",
    "MessageProcessor",
    "MessageValidator",
    "ProtocolMiddleware",
    "ReconnectionPolicy",
    "ReconnectionStrategy",
    "RegistrationProtocol",
    "ServerMessage",
    "ServerMessageType",
    "TaskExecutionProtocol",
    "TaskRejected",
    "TaskStatus",
    "TimeoutManager",
    "Transport",
    "TransportClosed",
    "TransportState",
    "WebSocketTransport",
    "memory_transport_pair",
    "parse_client_message",
    "parse_server_message",
]


def __getattr__(name: str) -> Any:
    """DeviceClientEndpoint and DeviceServerEndpoint, imported on first use (they import this package)."""
    if name in ("DeviceClientEndpoint", "DeviceServerEndpoint"):
        from starweave.aip import endpoints

        return getattr(endpoints, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
