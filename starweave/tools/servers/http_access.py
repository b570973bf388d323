"""Who may use an MCP server that Starweave serves over HTTP (``starweave mcp serve ... --transport http``).

On a loopback address the MCP SDK's DNS-rebinding protection checks the Host and Origin headers and
nothing else is needed: only this machine reaches the port. Off loopback anyone on the network
could run commands or tap the phone, so serving there needs an explicit ``--allow-remote`` and a
key (``--key`` or ``$STARWEAVE_MCP_KEY``). Every request must then carry ``Authorization: Bearer
KEY`` (checked in constant time by :class:`KeyGuard`, ``/health`` included), and Host/Origin must
name this machine (the bind address, its host names, ``--allow-host``). A key given on loopback is
required there too.
"""

from __future__ import annotations

import hmac
import json
import socket
from dataclasses import dataclass

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from starweave.errors import ConfigError
from starweave.server.settings import LOOPBACK_NAMES, WILDCARD_HOSTS, is_loopback

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


def security_settings(host: str, access: HttpAccess) -> TransportSecuritySettings | None:
    """Host/Origin checks for a remote server; None on loopback (the SDK's own protection applies)."""
    if not access.remote:
        return None
    names = {*LOOPBACK_NAMES, *access.allowed_hosts}
    if host not in WILDCARD_HOSTS:
        names.add(host)
    else:  # bound to every interface: the names clients may use for this machine
        names |= {socket.gethostname(), socket.getfqdn()}
    shown = sorted(f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names if n)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*shown, *(f"{n}:*" for n in shown)],
        allowed_origins=[o for n in shown for o in (f"http://{n}", f"http://{n}:*")],
    )


class KeyGuard:
    """ASGI middleware: Host/Origin checked (``settings``) and, with a key, ``Authorization: Bearer
    KEY`` required on every HTTP request; refusals answer 421/403/401 before the app sees them."""

    def __init__(self, app: ASGIApp, key: str, settings: TransportSecuritySettings | None) -> None:
        self.app = app
        self._key = key.encode("utf-8")
        self._headers = TransportSecurityMiddleware(settings) if settings is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if self._headers is not None:
            refused = await self._headers.validate_request(request, is_post=False)
            if refused is not None:
                await refused(scope, receive, send)
                return
        if self._key and not self._authorized(request.headers.get("authorization", "")):
            await _unauthorized(send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        # compare_digest: the time taken does not tell how much of the key matched.
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("utf-8"), self._key)


async def _unauthorized(send: Send) -> None:
    body = json.dumps({"error": "a valid key is required: Authorization: Bearer KEY"}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b"Bearer"),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def guarded_app(server: MCPServer, host: str, access: HttpAccess) -> ASGIApp:
    """``server``'s streamable-HTTP app at ``/mcp`` (JSON responses), behind :class:`KeyGuard`."""
    settings = security_settings(host, access)
    app = server.streamable_http_app(
        streamable_http_path="/mcp", json_response=True, host=host, transport_security=settings
    )
    if not access.key and settings is None:
        return app
    return KeyGuard(app, access.key, settings)


def uvicorn_server(app: ASGIApp, host: str = "127.0.0.1", port: int = 8000) -> uvicorn.Server:
    """A quiet uvicorn server for ``app`` at ``host:port`` (unless served on sockets given to its
    ``serve``); no access log: nothing of a request is printed."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", access_log=False)
    return uvicorn.Server(config)
