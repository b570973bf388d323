"""Which agent-server URLs a device that came in over HTTP (the WebUI's add-device form) may name.

The operator's own devices file is trusted as written. A URL typed into a web form is not: it
could point the device manager at the cloud metadata address, at another service on this machine
or at a host that collects whatever the manager sends. Such a URL must be a plain ``ws://`` or
``wss://`` URL (no ``user:password@``) whose host is this machine (loopback, in any spelling) or a
host the operator's file already names. The one check is :func:`http_device_url_problem`; the
WebUI runs it before a device is stored and the devices-file loader again at every start (the
form's first look, before the file is read, is its :func:`url_form_problem` half).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starweave.server.settings import canonical_host, is_loopback

__all__ = ["INVALID_URL", "UrlRefusal", "http_device_url_problem", "url_form_problem", "url_host"]

INVALID_URL = "Invalid WebSocket URL"


@dataclass(frozen=True)
class UrlRefusal:
    """Why a URL is refused; ``status``: 422 for its form, 403 for a host that is not allowed."""

    reason: str
    status: int = 422


def url_host(url: str) -> str | None:
    """The canonical host of ``url`` (see :func:`canonical_host`), or None when it has none."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return canonical_host(host) if host else None


def url_form_problem(url: str) -> UrlRefusal | None:
    """Why ``url`` is not a plain ``ws://``/``wss://`` URL a device that came in over HTTP may
    carry (422), or None; its host is :func:`http_device_url_problem`'s concern."""
    # Only printable ASCII without spaces or backslashes: two URL parsers (ours, the WebSocket
    # library's) then cannot read two different hosts out of one string.
    if not url or any(not 33 <= ord(char) <= 126 for char in url) or "\\" in url:
        return UrlRefusal(INVALID_URL)
    try:
        parts = urlsplit(url)
        _ = parts.port  # a malformed port raises here
    except ValueError:
        return UrlRefusal(INVALID_URL)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        return UrlRefusal(INVALID_URL)
    if "@" in parts.netloc:
        return UrlRefusal("A server URL must not carry a user name or password (user:password@)")
    return None


def http_device_url_problem(url: str, allowed_hosts: Iterable[str]) -> UrlRefusal | None:
    """Why a device that came in over HTTP may not use ``url``, or None: its form
    (:func:`url_form_problem`), or a host that is neither loopback nor in ``allowed_hosts`` (the
    hosts of the devices the operator wrote into the file; 403)."""
    problem = url_form_problem(url)
    if problem is not None:
        return problem
    hostname = urlsplit(url).hostname or ""
    host = canonical_host(hostname)
    if is_loopback(host) or host in {canonical_host(h) for h in allowed_hosts}:
        return None
    return UrlRefusal(
        f"Host '{hostname}' is not allowed: a device added here must use an agent server on this "
        "machine or on a host the devices file already lists",
        403,
    )
