"""Access checks for HTTP and WebSocket requests: API key, Host allow-list, Origin allow-list.

The Host and Origin checks stop DNS rebinding: a web page on evil.example that re-points its name
at 127.0.0.1 reaches the server with ``Host: evil.example`` and ``Origin: http://evil.example``.
Non-browser clients (device clients, curl) send no Origin and are not affected by that check.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import HTTPException, Request

from starweave.aip.messages import DEVICE_TOKEN_HEADER
from starweave.server.credentials import DeviceCredentials
from starweave.server.settings import ServerSettings, canonical_host

API_KEY_HEADER = "X-API-Key"
__all__ = [
    "API_KEY_HEADER",
    "DEVICE_TOKEN_HEADER",
    "WS_POLICY_VIOLATION",
    "WS_TOKEN_PARAM",
    "AccessDenied",
    "SecurityPolicy",
    "WsAccess",
    "http_guard",
    "ws_credentials",
]
WS_TOKEN_PARAM = "token"
WS_POLICY_VIOLATION = 1008


@dataclass(frozen=True)
class AccessDenied:
    """Why a request was refused; ``status`` is the HTTP code (401 key, 403 host/origin)."""

    status: int
    reason: str


@dataclass(frozen=True)
class WsAccess:
    """What a WebSocket connection proved: the shared key, and the device ids whose token it holds."""

    shared_key_ok: bool
    proven: frozenset[str]


def _split_host(value: str) -> tuple[str, str | None]:
    """``host[:port]`` → (host, port); IPv6 literals keep their brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, port
    return value, None


class SecurityPolicy:
    """The checks built from :class:`ServerSettings`; pure functions of the request headers."""

    def __init__(self, settings: ServerSettings, credentials: DeviceCredentials | None = None) -> None:
        self.credentials = credentials or DeviceCredentials()
        self._key = settings.api_key.encode() if settings.api_key else None
        self._hosts = {h.strip().lower() for h in settings.allowed_hosts}
        # Entries without a port, one spelling per address ("[0:0:0:0:0:0:0:1]" is "::1").
        self._names = {canonical_host(h) for h in self._hosts if _split_host(h)[1] is None}
        self._any_host = "*" in self._hosts
        self._origins = {o.rstrip("/").lower() for o in settings.allowed_origins}

    def host_allowed(self, host_header: str | None) -> bool:
        """A Host header is allowed when it matches an entry (an entry without a port: any port)."""
        if self._any_host:
            return True
        if not host_header:
            return False
        value = host_header.strip().lower()
        if value in self._hosts:
            return True
        host, _ = _split_host(value)
        return canonical_host(host) in self._names

    def origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        """No Origin (not a browser) → allowed; else a listed origin or a same-host http(s)/ws(s) one."""
        if origin is None:
            return True
        value = origin.strip().rstrip("/").lower()
        if value in self._origins:
            return True
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
            return False
        return host_header is not None and parts.netloc == host_header.strip().lower()

    def key_valid(self, provided: str | None) -> bool:
        """Constant-time comparison with the configured key (True when none is configured)."""
        if self._key is None:
            return True
        if not provided:
            return False
        return hmac.compare_digest(provided.encode(), self._key)

    def check(self, host: str | None, origin: str | None, key: str | None) -> AccessDenied | None:
        """The first reason to refuse a request, or None."""
        if not self.host_allowed(host):
            return AccessDenied(403, f"Host '{host}' is not allowed; add it to allowed_hosts")
        if not self.origin_allowed(origin, host):
            return AccessDenied(403, f"Origin '{origin}' is not allowed; add it to allowed_origins")
        if not self.key_valid(key):
            return AccessDenied(401, "Invalid or missing API key")
        return None

    def check_ws(
        self, host: str | None, origin: str | None, key: str | None, device_token: str | None
    ) -> AccessDenied | WsAccess:
        """A WebSocket handshake: the shared key or a device token (which proves that device's id)."""
        if not self.host_allowed(host):
            return AccessDenied(403, f"Host '{host}' is not allowed; add it to allowed_hosts")
        if not self.origin_allowed(origin, host):
            return AccessDenied(403, f"Origin '{origin}' is not allowed; add it to allowed_origins")
        proven = {owner for owner in map(self.credentials.owner, (key, device_token)) if owner}
        shared_ok = self.key_valid(key)
        if not shared_ok and not proven:
            return AccessDenied(401, "Invalid or missing API key")
        return WsAccess(shared_ok, frozenset(proven))


def ws_credentials(query_token: str | None, header_key: str | None) -> str | None:
    """The key a WebSocket client offered: ``?token=`` first, then the ``X-API-Key`` header."""
    return query_token or header_key


def http_guard(policy: SecurityPolicy) -> Callable[[Request], Awaitable[None]]:
    """A FastAPI dependency enforcing ``policy`` on HTTP routes (401/403 with ``{"detail": ...}``)."""

    async def guard(request: Request) -> None:
        denied = policy.check(
            request.headers.get("host"), request.headers.get("origin"), request.headers.get(API_KEY_HEADER)
        )
        if denied is not None:
            raise HTTPException(status_code=denied.status, detail=denied.reason)

    return guard
