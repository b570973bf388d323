"""DeviceRegistry: the single source of truth for AgentProfiles and their status (spec B §1.3, E §9.3).

Every status change goes through :meth:`DeviceRegistry.update_device_status`, which refuses the
transitions the device state machine does not have, so a manager bug shows up as an error instead
of a device silently stuck in the wrong state::

    DISCONNECTED → CONNECTING → CONNECTED → IDLE ⇄ BUSY
    any online or connecting state → FAILED → CONNECTING (reconnection)
    anything → DISCONNECTED (explicit disconnect)

The registry is used from one event loop only: no lock is needed (nothing in it awaits).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starweave.errors import InvalidArgumentError, InvalidDeviceTransition, UnknownDevice
from starweave.galaxy.devices.profile import ONLINE_STATUSES, AgentProfile, DeviceStatus

__all__ = ["ALLOWED_TRANSITIONS", "DeviceRegistry"]

ALLOWED_TRANSITIONS: dict[DeviceStatus, frozenset[DeviceStatus]] = {
    DeviceStatus.DISCONNECTED: frozenset({DeviceStatus.CONNECTING}),
    DeviceStatus.CONNECTING: frozenset(
        {DeviceStatus.CONNECTED, DeviceStatus.FAILED, DeviceStatus.DISCONNECTED}
    ),
    DeviceStatus.CONNECTED: frozenset({DeviceStatus.IDLE, DeviceStatus.FAILED, DeviceStatus.DISCONNECTED}),
    DeviceStatus.IDLE: frozenset({DeviceStatus.BUSY, DeviceStatus.FAILED, DeviceStatus.DISCONNECTED}),
    DeviceStatus.BUSY: frozenset({DeviceStatus.IDLE, DeviceStatus.FAILED, DeviceStatus.DISCONNECTED}),
    DeviceStatus.FAILED: frozenset({DeviceStatus.CONNECTING, DeviceStatus.DISCONNECTED}),
}

# System-info keys copied into metadata["system_info"] (the reference's selection).
_SYSTEM_INFO_KEYS = (
    "platform",
    "os_version",
    "cpu_count",
    "memory_total_gb",
    "hostname",
    "ip_address",
    "platform_type",
    "schema_version",
)


class DeviceRegistry:
    """AgentProfiles by device id, with checked status transitions."""

    def __init__(self) -> None:
        self._devices: dict[str, AgentProfile] = {}

    # ---- membership ---------------------------------------------------------------------
    def register_device(
        self,
        device_id: str,
        server_url: str,
        os: str | None = None,
        capabilities: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        max_retries: int = 5,
    ) -> AgentProfile:
        """Add a device (status DISCONNECTED); ValueError if the id is empty or already registered."""
        if not device_id:
            raise InvalidArgumentError("device_id must not be empty")
        if device_id in self._devices:
            raise InvalidArgumentError(f"device '{device_id}' is already registered")
        if max_retries < 0:
            raise InvalidArgumentError("max_retries must be 0 or more")
        profile = AgentProfile(
            device_id=device_id,
            server_url=server_url,
            os=(os or "unknown").lower(),
            capabilities=list(capabilities or []),
            metadata=dict(metadata or {}),
            max_retries=max_retries,
        )
        self._devices[device_id] = profile
        return profile

    def remove_device(self, device_id: str) -> bool:
        """Forget a device; False if it was not registered."""
        return self._devices.pop(device_id, None) is not None

    def is_device_registered(self, device_id: str) -> bool:
        """True if ``device_id`` is registered."""
        return device_id in self._devices

    def get_device(self, device_id: str) -> AgentProfile | None:
        """The profile of ``device_id``, or None."""
        return self._devices.get(device_id)

    def require(self, device_id: str) -> AgentProfile:
        """The profile of ``device_id``; UnknownDevice naming the known ids otherwise."""
        profile = self._devices.get(device_id)
        if profile is None:
            raise UnknownDevice(self.unknown_device_message(device_id))
        return profile

    def unknown_device_message(self, device_id: str) -> str:
        """ "unknown device 'x' (known devices: a, b)" — the error every caller shows."""
        known = ", ".join(sorted(self._devices)) or "none registered"
        return f"unknown device '{device_id}' (known devices: {known})"

    def device_ids(self) -> list[str]:
        """Every registered id, in registration order."""
        return list(self._devices)

    def get_all_devices(self, connected: bool = False) -> dict[str, AgentProfile]:
        """All profiles (only the online ones when ``connected``)."""
        return {
            device_id: profile
            for device_id, profile in self._devices.items()
            if not connected or profile.is_online
        }

    def get_connected_devices(self) -> list[str]:
        """Ids of the devices that are CONNECTED, IDLE or BUSY (the reference counted only CONNECTED)."""
        return [d for d, p in self._devices.items() if p.status in ONLINE_STATUSES]

    # ---- status -------------------------------------------------------------------------
    def update_device_status(self, device_id: str, status: DeviceStatus) -> DeviceStatus:
        """Move ``device_id`` to ``status``; returns the previous status (equal: nothing changed).

        InvalidDeviceTransition when the state machine has no such edge.
        """
        profile = self.require(device_id)
        previous = profile.status
        if previous == status:
            return previous
        if status not in ALLOWED_TRANSITIONS[previous]:
            raise InvalidDeviceTransition(
                f"device '{device_id}' cannot go from {previous.value} to {status.value}"
            )
        profile.status = status
        if status != DeviceStatus.BUSY:
            profile.current_task_id = None
        return previous

    def set_device_busy(self, device_id: str, task_id: str) -> DeviceStatus:
        """IDLE → BUSY running ``task_id``; returns the previous status."""
        previous = self.update_device_status(device_id, DeviceStatus.BUSY)
        self._devices[device_id].current_task_id = task_id
        return previous

    def set_device_idle(self, device_id: str) -> DeviceStatus:
        """CONNECTED/BUSY → IDLE (clears the current task); returns the previous status."""
        return self.update_device_status(device_id, DeviceStatus.IDLE)

    def is_device_busy(self, device_id: str) -> bool:
        """True while the device runs a task."""
        return self.require(device_id).status == DeviceStatus.BUSY

    def get_current_task(self, device_id: str) -> str | None:
        """The task the device runs, if any."""
        return self.require(device_id).current_task_id

    # ---- health ---------------------------------------------------------------------------
    def increment_connection_attempts(self, device_id: str) -> int:
        """Count one more connection attempt; returns the new count."""
        profile = self.require(device_id)
        profile.connection_attempts += 1
        return profile.connection_attempts

    def reset_connection_attempts(self, device_id: str) -> None:
        """Back to 0 after a successful connection."""
        self.require(device_id).connection_attempts = 0

    def update_heartbeat(self, device_id: str, when: datetime | None = None) -> None:
        """Record a sign of life (UTC now by default)."""
        self.require(device_id).last_heartbeat = when or datetime.now(UTC)

    # ---- capabilities and system info -----------------------------------------------------
    def get_device_capabilities(self, device_id: str) -> list[str]:
        """The device's capabilities (configured plus the features it reported)."""
        return list(self.require(device_id).capabilities)

    def set_device_capabilities(self, device_id: str, capabilities: dict[str, Any]) -> None:
        """Extend capabilities with ``capabilities["capabilities"]`` and merge the rest into metadata."""
        profile = self.require(device_id)
        extra = capabilities.get("capabilities") or []
        profile.capabilities = _union(profile.capabilities, [str(c) for c in extra])
        profile.metadata.update({k: v for k, v in capabilities.items() if k != "capabilities"})

    def update_device_system_info(self, device_id: str, info: dict[str, Any]) -> None:
        """Store what the device reported (spec E §9.3).

        ``platform`` fills ``os`` when it was not configured; ``supported_features`` join the
        capabilities; a summary lands in ``metadata["system_info"]``; ``custom_metadata`` and
        ``tags`` are copied into metadata.
        """
        profile = self.require(device_id)
        profile.system_info = {k: v for k, v in info.items() if k != "device_id"}
        platform = info.get("platform")
        if isinstance(platform, str) and platform and profile.os in ("", "unknown"):
            profile.os = platform.lower()
        features = info.get("supported_features")
        if isinstance(features, list):
            profile.capabilities = _union(profile.capabilities, [str(f) for f in features])
        profile.metadata["system_info"] = {k: info[k] for k in _SYSTEM_INFO_KEYS if k in info}
        custom = info.get("custom_metadata")
        if isinstance(custom, dict):
            profile.metadata.update(custom)
        tags = info.get("tags")
        if tags is not None:
            profile.metadata["tags"] = tags

    def get_device_system_info(self, device_id: str) -> dict[str, Any]:
        """What the device last reported about itself (empty before the first report)."""
        return dict(self.require(device_id).system_info)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """``{device_id: profile.to_dict()}`` for every device (the events' ``all_devices``)."""
        return {device_id: profile.to_dict() for device_id, profile in self._devices.items()}


def _union(first: list[str], second: list[str]) -> list[str]:
    merged = list(first)
    for item in second:
        if item not in merged:
            merged.append(item)
    return merged
