"""``starweave mcp serve mobile``: MobileDataCollector and MobileExecutor in ONE process over HTTP.

One process, so that both servers share the device's :class:`MobileServerState` (the executor
clicks the controls the collector read). Each listens on its own port with streamable HTTP at
``/mcp`` and answers ``GET /health``. Both are guarded as ``mcp serve bash`` is
(:mod:`starweave.tools.servers.http_access`): off loopback only with ``--allow-remote`` and a key.
``/health`` names the server only: not the adb program nor the device.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse

from starweave.tools.mobile.adb import Adb
from starweave.tools.servers.http_access import HttpAccess, guarded_app, uvicorn_server
from starweave.tools.servers.mobile.collector import create_data_collector_server
from starweave.tools.servers.mobile.executor import create_executor_server
from starweave.tools.servers.mobile.state import mobile_state

Announce = Callable[[str, str], None]
"""Called with (namespace, url) once each server listens (the port is known even for port 0)."""


def _add_health(server: MCPServer, namespace: str) -> None:
    @server.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy", "server": namespace})


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _url(host: str, sock: socket.socket) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{sock.getsockname()[1]}/mcp"


async def serve_mobile(
    adb: Adb,
    host: str = "127.0.0.1",
    data_port: int = 8020,
    action_port: int = 8021,
    announce: Announce | None = None,
    access: HttpAccess | None = None,
) -> None:
    """Serve both mobile servers for ``adb``'s device until cancelled, guarded by ``access``."""
    state = mobile_state(adb)
    servers = {
        "MobileDataCollector": (create_data_collector_server(state), data_port),
        "MobileExecutor": (create_executor_server(state), action_port),
    }
    runs = []
    for namespace, (server, port) in servers.items():
        _add_health(server, namespace)
        app = guarded_app(server, host, access or HttpAccess())
        sock = _listen(host, port)
        runs.append((uvicorn_server(app), sock))
        if announce:
            announce(namespace, _url(host, sock))
    try:
        await asyncio.gather(*(srv.serve(sockets=[sock]) for srv, sock in runs))
    finally:
        for _, sock in runs:
            sock.close()
