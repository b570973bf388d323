"""Server settings: bind address, API key, Host/Origin allow-lists and resource limits."""

from __future__ import annotations

import ipaddress
import platform as _platform
from pathlib import Path

from pydantic import BaseModel, Field, model_validator

from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES
from starweave.errors import ConfigError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")

DEFAULT_MAX_BAD_FRAMES = 100
# The reference device client sends its AIP heartbeat every 120 s; three missed beats mean the peer
# is gone. Transport pings (below) count as life too, so a live client is never dropped for being quiet.
DEFAULT_HEARTBEAT_TIMEOUT = 3 * 120.0
# The server pings every connection this often (at most): often enough to keep NAT mappings open.
WS_PING_INTERVAL = 20.0
# /api/dispatch: a task request is a natural-language instruction; 64 KiB is far more than one needs,
# and small enough that the device's TASK echo always fits in a frame.
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024
# Any HTTP request body (the API only takes small JSON documents).
DEFAULT_MAX_BODY_BYTES = 256 * 1024
# Tasks waiting for one busy device; a full queue answers 429.
DEFAULT_MAX_QUEUED_TASKS = 32


def canonical_host(host: str) -> str:
    """One spelling per address, for every comparison of host names: brackets, case and a final
    dot dropped; an IP literal in ``ipaddress``'s form, an IPv4-mapped IPv6 one as its IPv4
    address (``[0:0:0:0:0:0:0:1]`` → ``::1``, ``::ffff:127.0.0.1`` → ``127.0.0.1``)."""
    name = host.strip().strip("[]").lower().rstrip(".")
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def is_loopback(host: str) -> bool:
    """True when ``host`` only accepts connections from this machine: ``localhost``, all of
    127.0.0.0/8 and ``::1`` in any spelling (IPv4-mapped included)."""
    name = canonical_host(host)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _with_ports(names: list[str], port: int) -> list[str]:
    out: list[str] = []
    for name in names:
        bare = name.strip("[]")
        host = f"[{bare}]" if ":" in bare else bare
        for entry in (bare, host, f"{host}:{port}"):
            if entry not in out:
                out.append(entry)
    return out


class ServerSettings(BaseModel):
    """How the agent server listens and what it accepts.

    ``api_key``: when set, every /api request needs ``X-API-Key`` and every /ws connection
    ``?token=`` or ``X-API-Key``. It is mandatory when ``host`` is not a loopback address (or when
    ``require_key_on_loopback``); :meth:`validate_security` enforces that.
    ``allowed_hosts``: Host header values accepted (DNS-rebinding protection). An entry without a
    port matches any port; ``*`` matches anything. Defaults to localhost, 127.0.0.1, ::1 and the
    bind host, with and without ``:port`` (plus ``*`` when bound to 0.0.0.0/::).
    ``allowed_origins``: browser origins accepted besides same-host ones.
    """

    host: str = "127.0.0.1"
    port: int = Field(default=5000, ge=0, le=65535)
    platform: str = Field(default_factory=lambda: _platform.system().lower())
    api_key: str | None = None
    require_key_on_loopback: bool = False
    allowed_hosts: list[str] = Field(default_factory=list)
    allowed_origins: list[str] = Field(default_factory=list)
    # The one AIP frame-limit default (1 MiB, see aip.frame_limit), which the clients assume too.
    max_message_bytes: int = Field(default=DEFAULT_MAX_FRAME_BYTES, gt=0)
    heartbeat_timeout: float = Field(default=DEFAULT_HEARTBEAT_TIMEOUT, gt=0)
    max_sessions: int = Field(default=100, gt=0)
    max_bad_frames: int = Field(default=DEFAULT_MAX_BAD_FRAMES, gt=0)
    log_level: str = "info"
    # Finished tasks' results (and unclaimed dispatch reservations) are kept this long, then pruned.
    result_ttl: float = Field(default=3600.0, gt=0)
    cleanup_interval: float = Field(default=60.0, gt=0)
    # Messages of one connection handled at once; the reader waits beyond it (back-pressure).
    max_inflight_messages: int = Field(default=64, gt=0)
    # ---- flood resistance (server/guard.py, server/limits.py) ----
    # A connection must send a complete request head (HTTP request or WebSocket upgrade) this long
    # after it opens or after its previous response; slow or silent ones are closed.
    header_timeout: float = Field(default=10.0, gt=0)
    # Connections that have not sent a request head yet; over the cap the oldest one is closed, so a
    # flood of idle sockets cannot starve /api/health or a registering device.
    max_pending_connections: int = Field(default=1024, gt=0)
    # A request body must arrive within this (after its head), and be at most max_body_bytes.
    body_timeout: float = Field(default=30.0, gt=0)
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, gt=0)
    # The longest /api/dispatch ``request`` (UTF-8 bytes); longer ones get 413.
    max_request_bytes: int = Field(default=DEFAULT_MAX_REQUEST_BYTES, gt=0)
    # A WebSocket client must register this long after connecting.
    registration_timeout: float = Field(default=30.0, gt=0)
    # ---- busy devices (server/dispatch_queue.py) ----
    max_queued_tasks: int = Field(default=DEFAULT_MAX_QUEUED_TASKS, ge=0)
    # A dispatched TASK the device has not started (echoed) within this ends as FAILED.
    dispatch_start_timeout: float = Field(default=60.0, gt=0)
    # ---- device credentials (server/credentials.py) ----
    # Where issued device-token hashes are kept (0600 JSON); None: in memory only.
    credentials_file: Path | None = None
    # Device id → token, from the operator's configuration (kept as hashes in memory).
    device_tokens: dict[str, str] = Field(default_factory=dict, repr=False)

    @model_validator(mode="after")
    def _default_hosts(self) -> ServerSettings:
        if not self.allowed_hosts:
            names = list(LOOPBACK_NAMES)
            if self.host not in names and self.host not in WILDCARD_HOSTS:
                names.append(self.host)
            self.allowed_hosts = _with_ports(names, self.port)
            if self.host in WILDCARD_HOSTS:
                # Bound to every interface, clients use whatever name or address reaches us; the
                # (then mandatory) API key is the protection. Narrow it with allowed_hosts.
                self.allowed_hosts.append("*")
        if self.api_key == "":
            self.api_key = None
        return self

    @property
    def loopback_only(self) -> bool:
        """True when the server binds a loopback address only."""
        return is_loopback(self.host)

    @property
    def key_required(self) -> bool:
        """True when the configuration demands an API key."""
        return not self.loopback_only or self.require_key_on_loopback

    @property
    def ws_max_size(self) -> int:
        """Hard frame limit for uvicorn (connection closed with 1009 above it).

        Larger than ``max_message_bytes`` so that moderately oversize frames get an ERROR reply and
        the connection survives; only absurd frames cost the connection.
        """
        return self.max_message_bytes * 4 + 64 * 1024

    @property
    def ws_ping_interval(self) -> float:
        """Seconds between the server's WebSocket pings to each connection."""
        return min(WS_PING_INTERVAL, self.heartbeat_timeout / 3)

    @property
    def ws_ping_timeout(self) -> float:
        """How long a ping may go unanswered before the connection is dropped.

        The next ping leaves ``ws_ping_interval`` after the last pong, so a peer that stops
        answering (gone, or its TCP link dead) is dropped ``heartbeat_timeout`` after its last sign
        of life, and a peer that answers pings stays however rarely it sends AIP heartbeats.
        """
        return self.heartbeat_timeout - self.ws_ping_interval

    def validate_security(self) -> None:
        """Raise ConfigError when the server would be reachable without an API key."""
        if self.key_required and not self.api_key:
            where = (
                f"on {self.host} (not a loopback address, so other machines can connect)"
                if not self.loopback_only
                else "with require_key_on_loopback set"
            )
            raise ConfigError(
                f"server: api_key: an API key is required when listening {where}; "
                "set an API key (for example one from `python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'`) or bind 127.0.0.1"
            )
