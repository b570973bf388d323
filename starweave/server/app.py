"""The FastAPI application and the programmatic uvicorn runner."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import uvicorn
from fastapi import FastAPI, WebSocket

from starweave.server.api import build_api_router
from starweave.server.credentials import DeviceCredentials
from starweave.server.dispatch_queue import DispatchQueue
from starweave.server.frame_guard import NoFramingMiddleware
from starweave.server.guard import PendingConnections, guarded_protocol
from starweave.server.limits import BodyLimitMiddleware, raise_open_file_limit
from starweave.server.local_token import publish_local_token, withdraw_local_token
from starweave.server.log_limits import install_peer_error_filter, install_rate_limit
from starweave.server.log_redaction import install_secret_filter
from starweave.server.registry import ClientConnectionManager
from starweave.server.security import SecurityPolicy
from starweave.server.sessions import ServiceSessionFactory, SessionManager
from starweave.server.settings import ServerSettings
from starweave.server.uvicorn_server import Server
from starweave.server.ws_handler import WebSocketHandler

logger = logging.getLogger(__name__)

STARTUP_TIMEOUT = 30.0
# Connections the kernel queues before we accept them (uvicorn's default is 2048).
LISTEN_BACKLOG = 4096


def create_app(
    settings: ServerSettings,
    session_factory: ServiceSessionFactory,
    credentials: DeviceCredentials | None = None,
) -> FastAPI:
    """One app serving /ws (AIP) and /api; raises ConfigError for an unsafe configuration.

    ``credentials`` defaults to the settings' credentials file and configured device tokens.
    """
    settings.validate_security()
    install_peer_error_filter()
    registry = ClientConnectionManager()

    def after_end(_session_id: str) -> None:
        queue.kick_all()

    sessions = SessionManager(
        session_factory,
        platform=settings.platform,
        max_sessions=settings.max_sessions,
        result_ttl=settings.result_ttl,
        on_end=registry.discard_session,
        after_end=after_end,
    )
    queue = DispatchQueue(
        registry,
        sessions,
        max_queued=settings.max_queued_tasks,
        start_timeout=settings.dispatch_start_timeout,
    )
    if credentials is None:
        credentials = DeviceCredentials(settings.credentials_file, settings.device_tokens)
    policy = SecurityPolicy(settings, credentials)
    handler = WebSocketHandler(registry, sessions, settings, policy, queue)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        background = [
            asyncio.create_task(sessions.run_cleanup(settings.cleanup_interval, keep=queue.names)),
        ]
        try:
            yield
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await queue.close()
            await sessions.shutdown()

    # No /docs, /redoc or /openapi.json: they would be served without the Host and API-key checks.
    app = FastAPI(
        title="Starweave agent server", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.settings = settings
    app.state.registry = registry
    app.state.sessions = sessions
    app.state.ws_handler = handler
    app.state.dispatch_queue = queue
    app.state.credentials = credentials
    app.include_router(build_api_router(registry, sessions, policy, queue, settings, time.monotonic()))
    app.add_middleware(
        BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes, timeout=settings.body_timeout
    )
    app.add_middleware(NoFramingMiddleware)

    @app.websocket("/ws")
    async def aip_endpoint(websocket: WebSocket) -> None:
        await handler.handle(websocket)

    return app


@dataclass
class RunningServer:
    """A started uvicorn server: its app, bound port and the task serving it."""

    app: FastAPI
    server: uvicorn.Server
    task: asyncio.Task[None]
    host: str
    port: int
    guard: PendingConnections | None = None
    guard_task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """``http://host:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        """Ask uvicorn to exit and wait for it."""
        self.server.should_exit = True
        try:
            await self.task
        finally:
            if self.guard_task is not None:
                self.guard_task.cancel()
                await asyncio.gather(self.guard_task, return_exceptions=True)


async def serve_in_task(server: uvicorn.Server) -> tuple[asyncio.Task[None], int]:
    """Start ``server`` in a task; return once it listens, with the bound port."""
    config = server.config
    task = asyncio.create_task(server.serve())
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not server.started:
        if task.done():
            await task  # raises the startup error, if any
            raise OSError(f"uvicorn exited during startup on {config.host}:{config.port}")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise TimeoutError(f"server did not start within {STARTUP_TIMEOUT:g}s")
        await asyncio.sleep(0.02)
    port = config.port
    for listener in server.servers:
        for sock in listener.sockets:
            port = sock.getsockname()[1]
            break
    return task, port


async def start_server(
    settings: ServerSettings,
    session_factory: ServiceSessionFactory,
    credentials: DeviceCredentials | None = None,
) -> RunningServer:
    """Start uvicorn in a task and return once it listens (port 0 → the OS picks one).

    Connections that send no request head in time are closed (server/guard.py), and the open-file
    limit is raised so that a burst of connections cannot make accept() fail first.
    """
    app = create_app(settings, session_factory, credentials)
    soft, _hard = raise_open_file_limit()
    guard = PendingConnections(
        min(settings.max_pending_connections, max(64, soft // 4)), settings.header_timeout
    )
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=guarded_protocol(guard),
        # Liveness is the transport's: the server pings, a peer that stops answering is dropped.
        # Pinned because uvicorn's wsproto implementation sends no pings.
        ws="websockets-sansio",
        ws_ping_interval=settings.ws_ping_interval,
        ws_ping_timeout=settings.ws_ping_timeout,
        ws_max_size=settings.ws_max_size,
        log_level=settings.log_level.lower(),
        lifespan="on",
        backlog=LISTEN_BACKLOG,
        timeout_keep_alive=5,
    )
    # After uvicorn.Config, which (re)configures uvicorn's loggers.
    install_secret_filter(settings.api_key)
    install_rate_limit()
    server = Server(config)
    guard_task = asyncio.create_task(guard.run())
    try:
        task, port = await serve_in_task(server)
    except BaseException:
        guard_task.cancel()
        raise
    return RunningServer(
        app=app, server=server, task=task, host=settings.host, port=port, guard=guard, guard_task=guard_task
    )


async def serve(
    settings: ServerSettings,
    session_factory: ServiceSessionFactory,
    credentials: DeviceCredentials | None = None,
    *,
    publish_key: bool = False,
) -> None:
    """Run the server until it is stopped; prints ``Starweave server listening on URL`` to stdout.

    ``publish_key``: the API key is the server's local token (server/local_token.py), written for
    this user's CLI once the port is known and removed at the end.
    """
    running = await start_server(settings, session_factory, credentials)
    token = settings.api_key if publish_key else None
    if token is not None:
        path = await asyncio.to_thread(publish_local_token, running.port, token)
        print(f"Local token (clients of this user read it from there): {path}", flush=True, file=sys.stderr)
    print(f"Starweave server listening on {running.url}", flush=True, file=sys.stdout)
    logger.info("Platform: %s; API key %s", settings.platform, "required" if settings.api_key else "off")
    try:
        await running.task
    finally:
        if token is not None:
            await asyncio.to_thread(withdraw_local_token, running.port, token)
