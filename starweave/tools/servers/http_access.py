"""Who may use an MCP server that Starweave serves over HTTP (``starweave mcp serve ... --transport http``).

Every request's Host and Origin must name this machine (loopback in any spelling, the bind address,
its host names when bound to every interface, ``--allow-host``): :class:`KeyGuard` checks them with
the agent server's :class:`~starweave.server.security.SecurityPolicy`, on loopback too, so a page on
a rebound DNS name cannot reach the tools. Off loopback anyone on the network could run commands or
tap the phone, so serving there needs an explicit ``--allow-remote`` and a key (``--key`` or
``$STARWEAVE_MCP_KEY``). Every request must then carry ``Authorization: Bearer KEY`` (checked in
constant time, ``/health`` included). A key given on loopback is required there too.
"""

from __future__ import annotations

import hmac
import json
import socket
from dataclasses import dataclass

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from starweave.errors import ConfigError
from starweave.server.security import SecurityPolicy
from starweave.server.settings import LOOPBACK_NAMES, WILDCARD_HOSTS, ServerSettings, is_loopback

#: The environment variable holding the serving side's key (a client names its own: api_key_env).
KEY_ENV = "STARWEAVE_MCP_KEY"


@dataclass(frozen=True)
class HttpAccess:
    """How an HTTP-served MCP server is guarded: ``key`` (when set) is required as a bearer token;
    ``remote``: served off loopback, so Host/Origin must name this machine or ``allowed_hosts``."""

    key: str = ""
    remote: bool = False
    allowed_hosts: tuple[str, ...] = ()


def http_access(
    host: str, allow_remote: bool, key: str | None, allowed_hosts: tuple[str, ...] = ()
) -> HttpAccess:
    """The guard of a server bound to ``host``; ConfigError (one line) when serving there is not
    allowed: off loopback without ``--allow-remote``, or without a key."""
    remote = not is_loopback(host)
    if remote and not allow_remote:
        raise ConfigError(
            f"refusing to serve on {host}: anyone who reaches it could use these tools; pass "
            f"--allow-remote and a key (--key or ${KEY_ENV}) to serve off loopback"
        )
    if remote and not key:
        raise ConfigError(
            f"--allow-remote needs a key: set ${KEY_ENV} or pass --key (clients send it as "
            "'Authorization: Bearer KEY')"
        )
    return HttpAccess(key or "", remote, allowed_hosts)


def host_policy(host: str, access: HttpAccess) -> SecurityPolicy:
    """The Host/Origin check (DNS rebinding) of a server bound to ``host``, on loopback too: the
    names of this machine (every spelling of a loopback address is one name, see
    :func:`~starweave.server.settings.canonical_host`), the bind address, ``--allow-host``; bound to
    every interface, the machine's host names as well."""
    names = [*LOOPBACK_NAMES, *access.allowed_hosts]
    if host not in WILDCARD_HOSTS:
        names.append(host)
    else:
        names += [socket.gethostname(), socket.getfqdn()]
    return SecurityPolicy(ServerSettings(host=host, port=0, allowed_hosts=[n for n in names if n]))


class KeyGuard:
    """ASGI middleware: Host/Origin checked (``policy``) on every request and, with a key,
    ``Authorization: Bearer KEY`` required; refusals answer 421/403/401 before the app sees them."""

    def __init__(self, app: ASGIApp, key: str, policy: SecurityPolicy) -> None:
        self.app = app
        self._key = key.encode("utf-8")
        self._policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host, origin = request.headers.get("host"), request.headers.get("origin")
        if not self._policy.host_allowed(host):
            await _refuse(send, 421, "Invalid Host header")
            return
        if not self._policy.origin_allowed(origin, host):
            await _refuse(send, 403, "Invalid Origin header")
            return
        if self._key and not self._authorized(request.headers.get("authorization", "")):
            await _refuse(send, 401, "a valid key is required: Authorization: Bearer KEY")
            return
        await self.app(scope, receive, send)

    def _authorized(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        # compare_digest: the time taken does not tell how much of the key matched.
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("utf-8"), self._key)


async def _refuse(send: Send, status: int, reason: str) -> None:
    body = json.dumps({"error": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def guarded_app(server: MCPServer, host: str, access: HttpAccess) -> ASGIApp:
    """``server``'s streamable-HTTP app at ``/mcp`` (JSON responses), behind :class:`KeyGuard`
    (always: the SDK's own Host check only knows three spellings of loopback)."""
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        host=host,
        # KeyGuard checks Host and Origin for every path; the SDK would check /mcp a second time,
        # with other rules (exact strings, no --allow-host on loopback).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return KeyGuard(app, access.key, host_policy(host, access))


def uvicorn_server(app: ASGIApp, host: str = "127.0.0.1", port: int = 8000) -> uvicorn.Server:
    """A quiet uvicorn server for ``app`` at ``host:port`` (unless served on sockets given to its
    ``serve``); no access log: nothing of a request is printed."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", access_log=False)
    return uvicorn.Server(config)
