"""AgentProfile and DeviceStatus: what Galaxy knows about each device (spec B §1.3, A §Galaxy)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class DeviceStatus(StrEnum):
    """DISCONNECTED → CONNECTING → CONNECTED → IDLE ⇄ BUSY; any → FAILED (then reconnect)."""

    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    IDLE = "idle"
    BUSY = "busy"
    FAILED = "failed"


ONLINE_STATUSES = frozenset({DeviceStatus.CONNECTED, DeviceStatus.IDLE, DeviceStatus.BUSY})


@dataclass
class AgentProfile:
    """One device as the constellation sees it: identity, capabilities, health and load."""

    device_id: str
    server_url: str
    os: str = "unknown"
    capabilities: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    status: DeviceStatus = DeviceStatus.DISCONNECTED
    last_heartbeat: datetime | None = None
    connection_attempts: int = 0
    max_retries: int = 5
    current_task_id: str | None = None
    system_info: dict[str, Any] = field(default_factory=dict)

    @property
    def is_online(self) -> bool:
        """True while CONNECTED, IDLE or BUSY."""
        return self.status in ONLINE_STATUSES

    @property
    def device_type(self) -> str:
        """The platform used for capability matching ("linux", "windows", ...)."""
        return str(self.metadata.get("device_type") or self.os or "unknown").lower()

    def to_dict(self) -> dict[str, Any]:
        """The reference's device dictionary (for events, prompts and reports)."""
        return {
            "device_id": self.device_id,
            "status": self.status.value,
            "os": self.os,
            "device_type": self.device_type,
            "server_url": self.server_url,
            "capabilities": list(self.capabilities),
            "metadata": dict(self.metadata),
            "last_heartbeat": self.last_heartbeat.isoformat() if self.last_heartbeat else None,
            "connection_attempts": self.connection_attempts,
            "max_retries": self.max_retries,
            "current_task_id": self.current_task_id,
            "system_info": dict(self.system_info),
        }
