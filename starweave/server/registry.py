"""ClientConnectionManager: who is connected, as what, and which sessions each client owns (spec D §4).

Everything runs on the server's single asyncio event loop and no method awaits, so each call is
atomic with respect to other coroutines; a ``threading.Lock`` (the reference's) would only matter
if thread-pool code touched the registry, which nothing here does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starweave.aip.messages import ClientType, ServerMessage
from starweave.errors import DuplicateClientError

logger = logging.getLogger(__name__)

SendFn = Callable[[ServerMessage], Awaitable[None]]


@dataclass
class ClientInfo:
    """One connected client. ``send`` writes to its WebSocket (serialised per connection)."""

    client_id: str
    client_type: ClientType
    websocket: Any
    send: SendFn
    platform: str
    connected_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    metadata: dict[str, Any] | None = None
    system_info: dict[str, Any] | None = None
    target_id: str | None = None

    def summary(self) -> dict[str, Any]:
        """The rich /api/clients?details=true entry."""
        connected = self.connected_at.timestamp()
        system_info = self.system_info or {}
        return {
            "client_id": self.client_id,
            "type": self.client_type.value,
            "platform": self.platform,
            "connected_at": connected,
            "uptime_seconds": round(time.time() - connected, 3),
            "capabilities": {
                key: system_info[key]
                for key in ("supported_features", "cpu_count", "memory_gb", "mcp_servers")
                if key in system_info
            },
            "target_id": self.target_id,
        }


def resolve_platform(metadata: Mapping[str, Any] | None, fallback: str) -> str:
    """A client's platform: ``metadata.platform``, else ``metadata.system_info.platform``, else
    ``fallback`` (the server's own platform setting)."""
    metadata = metadata or {}
    system_info = metadata.get("system_info")
    for value in (
        metadata.get("platform"),
        system_info.get("platform") if isinstance(system_info, dict) else None,
    ):
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return fallback


def merge_device_info(system_info: dict[str, Any] | None, server_config: Mapping[str, Any]) -> dict[str, Any]:
    """Server-side device config merged into the client's telemetry (the reference's rules).

    All server keys go into ``custom_metadata``; ``additional_features`` are unioned into
    ``supported_features`` (order not kept); ``tags`` also override the top-level tags.
    """
    merged: dict[str, Any] = dict(system_info or {})
    custom = dict(merged.get("custom_metadata") or {})
    custom.update(server_config)
    merged["custom_metadata"] = custom
    if "supported_features" in merged and "additional_features" in server_config:
        merged["supported_features"] = list(
            set(merged["supported_features"]) | set(server_config["additional_features"])
        )
    if "tags" in server_config:
        merged["tags"] = server_config["tags"]
    return merged


class ClientConnectionManager:
    """The registry of connected devices and constellation clients and their session maps."""

    def __init__(self, device_configs: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.online_clients: dict[str, ClientInfo] = {}
        self._constellation_sessions: dict[str, list[str]] = {}
        self._device_sessions: dict[str, list[str]] = {}
        self._device_configs = {k: dict(v) for k, v in (device_configs or {}).items()}

    def add_client(
        self,
        client_id: str,
        platform: str,
        ws: Any,
        send: SendFn,
        client_type: ClientType = ClientType.DEVICE,
        metadata: dict[str, Any] | None = None,
        target_id: str | None = None,
    ) -> ClientInfo:
        """Register a client; raises DuplicateClientError when the id is taken (the old one stays)."""
        if client_id in self.online_clients:
            raise DuplicateClientError(f"Client ID '{client_id}' is already connected")
        system_info: dict[str, Any] | None = None
        if client_type == ClientType.DEVICE and metadata and isinstance(metadata.get("system_info"), dict):
            system_info = dict(metadata["system_info"])
        if client_type == ClientType.DEVICE and client_id in self._device_configs:
            system_info = self._merge_device_info(system_info, self._device_configs[client_id])
        info = ClientInfo(
            client_id=client_id,
            client_type=client_type,
            websocket=ws,
            send=send,
            platform=platform,
            metadata=metadata,
            system_info=system_info,
            target_id=target_id,
        )
        self.online_clients[client_id] = info
        custom = (system_info or {}).get("custom_metadata")
        if isinstance(custom, dict) and custom.get("sandbox") == "none":
            logger.warning(
                "Device %s runs the model's shell commands unconfined: %s",
                client_id,
                str(custom.get("command_confinement", "no sandbox"))[:200],
            )
        return info

    def remove_client(self, client_id: str) -> None:
        """Forget a client (its session maps are removed separately on disconnect)."""
        if self.online_clients.pop(client_id, None) is not None:
            logger.info("[ClientConnectionManager] Removed client: %s", client_id)

    def get_client(self, client_id: str) -> Any | None:
        """The client's WebSocket, or None."""
        info = self.online_clients.get(client_id)
        return info.websocket if info else None

    def get_client_info(self, client_id: str) -> ClientInfo | None:
        """The client's record, or None."""
        return self.online_clients.get(client_id)

    def get_client_type(self, client_id: str) -> ClientType | None:
        """DEVICE, CONSTELLATION or None when offline."""
        info = self.online_clients.get(client_id)
        return info.client_type if info else None

    def list_clients(self, client_type: ClientType | None = None) -> list[str]:
        """Ids of the connected clients, optionally of one type."""
        return [cid for cid, info in self.online_clients.items() if client_type in (None, info.client_type)]

    def list_clients_by_type(self, client_type: ClientType) -> list[str]:
        """Ids of the connected clients of one type."""
        return self.list_clients(client_type)

    def is_online(self, client_id: str) -> bool:
        """Connected, whatever the type."""
        return client_id in self.online_clients

    def is_device_connected(self, device_id: str) -> bool:
        """Connected AND a device (a constellation with that id does not count)."""
        return self.get_client_type(device_id) == ClientType.DEVICE

    def add_constellation_session(self, constellation_id: str, session_id: str) -> None:
        """Record that a constellation requested ``session_id``."""
        self._constellation_sessions.setdefault(constellation_id, []).append(session_id)

    def add_device_session(self, device_id: str, session_id: str) -> None:
        """Record that ``session_id`` runs on ``device_id``."""
        self._device_sessions.setdefault(device_id, []).append(session_id)

    def discard_session(self, session_id: str) -> None:
        """Remove an ended session from every client's list (empty lists are dropped)."""
        for table in (self._device_sessions, self._constellation_sessions):
            for owner in [owner for owner, ids in table.items() if session_id in ids]:
                table[owner].remove(session_id)
                if not table[owner]:
                    del table[owner]

    def get_constellation_sessions(self, constellation_id: str) -> list[str]:
        """A copy of the constellation's session ids."""
        return list(self._constellation_sessions.get(constellation_id, []))

    def get_device_sessions(self, device_id: str) -> list[str]:
        """A copy of the device's session ids."""
        return list(self._device_sessions.get(device_id, []))

    def remove_constellation_sessions(self, constellation_id: str) -> list[str]:
        """Pop and return the constellation's session ids."""
        return self._constellation_sessions.pop(constellation_id, [])

    def remove_device_sessions(self, device_id: str) -> list[str]:
        """Pop and return the device's session ids."""
        return self._device_sessions.pop(device_id, [])

    def get_device_system_info(self, device_id: str) -> dict[str, Any] | None:
        """The stored system info of a connected device (a copy), or None."""
        info = self.online_clients.get(device_id)
        if info is None or info.client_type != ClientType.DEVICE or info.system_info is None:
            return None
        return dict(info.system_info)

    def update_device_system_info(self, device_id: str, system_info: dict[str, Any]) -> bool:
        """Replace a device's system info (from a DEVICE_INFO_RESPONSE); False if not a device."""
        info = self.online_clients.get(device_id)
        if info is None or info.client_type != ClientType.DEVICE:
            return False
        config = self._device_configs.get(device_id)
        info.system_info = self._merge_device_info(system_info, config) if config else dict(system_info)
        return True

    def get_stats(self) -> dict[str, int]:
        """Counts of connected clients."""
        devices = len(self.list_clients(ClientType.DEVICE))
        return {
            "total": len(self.online_clients),
            "device_clients": devices,
            "constellation_clients": len(self.online_clients) - devices,
        }

    @staticmethod
    def _merge_device_info(
        system_info: dict[str, Any] | None, server_config: Mapping[str, Any]
    ) -> dict[str, Any]:
        return merge_device_info(system_info, server_config)
