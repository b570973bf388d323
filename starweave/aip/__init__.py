"""The Agent Interaction Protocol: messages, transport, protocols, resilience, endpoints.

The device and server endpoints live in the layers above: starweave.client.websocket.DeviceWebSocketClient
and starweave.server.ws_handler.WebSocketHandler.
"""

from starweave.aip.endpoints import ConstellationEndpoint, ConstellationProtocol, MessageProcessor
from starweave.aip.messages import (
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
    DeviceInfoProtocol,
    HeartbeatProtocol,
    ProtocolMiddleware,
    RegistrationProtocol,
)
from starweave.aip.resilience import (
    HeartbeatManager,
    ReconnectionPolicy,
    ReconnectionStrategy,
    TimeoutManager,
)
from starweave.aip.transport import (
    MemoryTransport,
    Transport,
    TransportState,
    WebSocketTransport,
    memory_transport_pair,
)

__all__ = [
    "AIPProtocol",
    "ClientMessage",
    "ClientMessageType",
    "ClientType",
    "ConstellationEndpoint",
    "ConstellationProtocol",
    "DeviceInfoProtocol",
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
    "TaskStatus",
    "TimeoutManager",
    "Transport",
    "TransportState",
    "WebSocketTransport",
    "memory_transport_pair",
    "parse_client_message",
    "parse_server_message",
]
