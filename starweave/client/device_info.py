"""Device telemetry sent at registration (spec A §6.6): platform, OS, CPU, memory, host, address.

Every source has its own fallback, and a failure of the whole collection still yields minimal info.
The sources are a ``SystemProbe`` of plain callables so tests can make any of them fail.
"""

from __future__ import annotations

import logging
import os
import platform
import socket
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["FEATURES", "DeviceInfoProvider", "DeviceSystemInfo", "SystemProbe", "local_ip_address"]

log = logging.getLogger("starweave.client.device_info")

FEATURES: dict[str, list[str]] = {
    "windows": ["gui", "cli", "browser", "file_system", "office", "windows_apps"],
    "linux": ["gui", "cli", "browser", "file_system", "office", "linux_apps"],
    "darwin": ["gui", "cli", "browser", "file_system", "office"],
}

# A TEST-NET-1 address (RFC 5737): "connecting" a UDP socket only asks the kernel which local
# address routes there; no packet is sent, and the address belongs to nobody.
_ROUTE_PROBE = ("192.0.2.1", 80)


@dataclass
class DeviceSystemInfo:
    """What a device tells the server about itself (``metadata.system_info`` of REGISTER)."""

    device_id: str
    platform: str
    os_version: str
    cpu_count: int
    memory_total_gb: float
    hostname: str
    ip_address: str
    supported_features: list[str] = field(default_factory=list)
    platform_type: str = "computer"
    schema_version: str = "1.0"
    custom_metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def _psutil_memory() -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    total: int = psutil.virtual_memory().total
    return total


def local_ip_address() -> str:
    """The local address of the default route, found without sending anything."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(_ROUTE_PROBE)
        address: str = probe.getsockname()[0]
        return address


def _resolved_ip() -> str:
    return socket.gethostbyname(socket.gethostname())


def _command_confinement() -> dict[str, str]:
    # What confines the model's shell commands here (chosen when the client started); a server
    # logs a warning for a device that says "none".
    from starweave.tools.sandbox.choice import current_confinement

    return current_confinement()


@dataclass
class SystemProbe:
    """Where each piece of information comes from; ``memory_total_bytes`` returns None without psutil."""

    system: Callable[[], str] = platform.system
    version: Callable[[], str] = platform.version
    cpu_count: Callable[[], int | None] = os.cpu_count
    memory_total_bytes: Callable[[], int | None] = _psutil_memory
    hostname: Callable[[], str] = socket.gethostname
    route_ip: Callable[[], str] = local_ip_address
    resolved_ip: Callable[[], str] = _resolved_ip
    confinement: Callable[[], dict[str, str]] = _command_confinement


class DeviceInfoProvider:
    """Collects DeviceSystemInfo from a SystemProbe (the real system by default).

    The calls can block (name resolution), so async code should run :meth:`collect_system_info`
    in a thread.
    """

    def __init__(self, probe: SystemProbe | None = None) -> None:
        self.probe = probe or SystemProbe()

    def collect_system_info(
        self, client_id: str, custom_metadata: dict[str, Any] | None = None
    ) -> DeviceSystemInfo:
        """Everything known about this device; minimal 'unknown' info if collection fails as a whole."""
        custom = {**dict(custom_metadata or {}), **self.confinement()}
        try:
            system = self.platform_name()
            return DeviceSystemInfo(
                device_id=client_id,
                platform=system,
                os_version=self.os_version(),
                cpu_count=self.cpu_count(),
                memory_total_gb=self.memory_total_gb(),
                hostname=self.hostname(),
                ip_address=self.ip_address(),
                supported_features=list(FEATURES.get(system, [])),
                platform_type="computer",
                custom_metadata=custom,
            )
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("Device info collection failed (%s); sending minimal info", exc)
            return self.minimal_info(client_id, custom)

    def confinement(self) -> dict[str, str]:
        """``sandbox`` (bwrap, landlock, none) and ``command_confinement`` (a sentence)."""
        try:
            return dict(self.probe.confinement())
        except (OSError, ValueError) as exc:
            log.warning("Cannot tell what confines shell commands (%s)", exc)
            return {"sandbox": "unknown", "command_confinement": "unknown"}

    @staticmethod
    def minimal_info(client_id: str, custom_metadata: dict[str, Any] | None = None) -> DeviceSystemInfo:
        """The info sent when nothing could be collected."""
        return DeviceSystemInfo(
            device_id=client_id,
            platform="unknown",
            os_version="unknown",
            cpu_count=0,
            memory_total_gb=0.0,
            hostname="unknown",
            ip_address="unknown",
            supported_features=[],
            platform_type="unknown",
            custom_metadata=dict(custom_metadata or {}),
        )

    def platform_name(self) -> str:
        """windows, linux, darwin … (lowercase); 'unknown' if undetectable."""
        try:
            return self.probe.system().lower() or "unknown"
        except OSError as exc:
            log.warning("Cannot detect the platform (%s)", exc)
            return "unknown"

    def os_version(self) -> str:
        """The OS version string, or 'unknown'."""
        try:
            return self.probe.version() or "unknown"
        except OSError as exc:
            log.warning("Cannot read the OS version (%s)", exc)
            return "unknown"

    def cpu_count(self) -> int:
        """Logical CPUs, 0 if unknown."""
        try:
            return self.probe.cpu_count() or 0
        except (OSError, NotImplementedError) as exc:
            log.warning("Cannot count CPUs (%s)", exc)
            return 0

    def memory_total_gb(self) -> float:
        """Total memory in GB (2 decimals); 0.0 without psutil or on error."""
        try:
            total = self.probe.memory_total_bytes()
        except OSError as exc:
            log.warning("Cannot read the memory size (%s)", exc)
            return 0.0
        if total is None:
            log.warning("psutil not installed, memory info unavailable")
            return 0.0
        return round(total / 1024**3, 2)

    def hostname(self) -> str:
        """The host name, or 'unknown'."""
        try:
            return self.probe.hostname() or "unknown"
        except OSError as exc:
            log.warning("Cannot read the host name (%s)", exc)
            return "unknown"

    def ip_address(self) -> str:
        """The default route's local address, else the host name's address, else 'unknown'."""
        for source in (self.probe.route_ip, self.probe.resolved_ip):
            try:
                address = source()
            except OSError as exc:
                log.debug("IP lookup via %s failed: %s", getattr(source, "__name__", source), exc)
                continue
            if address:
                return address
        return "unknown"
