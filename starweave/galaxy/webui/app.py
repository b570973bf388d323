"""The WebUI's FastAPI app: the page, /health, /api/devices and the /ws event stream (spec B §9).

Access follows the agent server's rules (starweave.server.security): a foreign Host or Origin is
refused on every route and on /ws; with an API key, /health and /api need ``X-API-Key`` and a /ws
page proves the key in its first message ``{"type": "auth", "key": ...}`` (or a non-browser client
in the ``X-API-Key`` handshake header). The key never travels in a URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from starweave.galaxy.webui.broadcast import Broadcaster, PageQueue, encode
from starweave.galaxy.webui.devices import DeviceRequestError, validate_device
from starweave.galaxy.webui.service import WebUIService
from starweave.json_input import parse_json
from starweave.server.frame_guard import NoFramingMiddleware
from starweave.server.limits import BodyLimitMiddleware
from starweave.server.log_limits import install_peer_error_filter
from starweave.server.security import API_KEY_HEADER, WS_POLICY_VIOLATION, SecurityPolicy, http_guard
from starweave.server.settings import ServerSettings

__all__ = ["AUTH_TIMEOUT", "STATIC_DIR", "create_app"]

STATIC_DIR = Path(__file__).parent / "static"
# The page's scripts are ES modules, which browsers run only when served as JavaScript; Windows
# registries sometimes map .js to text/plain, and StaticFiles asks mimetypes.
mimetypes.add_type("text/javascript", ".js")
AUTH_TIMEOUT = 10.0
KEY_REFUSED = "Invalid or missing API key"
FALLBACK_PAGE = (
    "<!doctype html><title>Galaxy WebUI</title><p>Server is running (the page is not installed).</p>"
)

Handler = Callable[[WebUIService, PageQueue, dict[str, Any]], Awaitable[None]]


async def _request(service: WebUIService, page: PageQueue, message: dict[str, Any]) -> None:
    problem = service.submit(str(message.get("text") or ""))
    if problem:
        page.put(encode({"type": "error", "message": problem, "timestamp": time.time()}))


async def _reset(service: WebUIService, _page: PageQueue, _message: dict[str, Any]) -> None:
    await service.reset()


async def _ping(_service: WebUIService, page: PageQueue, _message: dict[str, Any]) -> None:
    page.put(encode({"type": "pong", "timestamp": time.time()}))


async def _snapshot(service: WebUIService, page: PageQueue, _message: dict[str, Any]) -> None:
    page.put(encode(service.state_snapshot()))


async def _ignore(_service: WebUIService, _page: PageQueue, _message: dict[str, Any]) -> None:
    """An ``auth`` message after the handshake (or without a key configured) changes nothing."""


HANDLERS: dict[str, Handler] = {
    "request": _request,
    "reset": _reset,
    "ping": _ping,
    "snapshot": _snapshot,
    "auth": _ignore,
}


def _parse(text: str) -> dict[str, Any] | None:
    try:
        message = parse_json(text)
    except ValueError:  # not JSON, or nested too deeply
        return None
    return message if isinstance(message, dict) else None


async def _next_frame(websocket: WebSocket) -> str | bytes | None:
    """The page's next frame (text, or the bytes of a binary one); None once it has gone away."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    text = message.get("text")
    return str(text) if text is not None else bytes(message.get("bytes") or b"")


def _frame_problem(frame: str | bytes, max_bytes: int) -> str | None:
    """Why a frame is not a message the page may send (binary, too large), or None."""
    if isinstance(frame, bytes):
        return "Binary frames are not accepted: send JSON text"
    if len(frame) > max_bytes or len(frame.encode("utf-8", "surrogatepass")) > max_bytes:
        return f"Message exceeds the limit of {max_bytes} bytes"
    return None


async def _authenticate(websocket: WebSocket, policy: SecurityPolicy) -> bool:
    """True when the page proved the key (header, or its first message within AUTH_TIMEOUT)."""
    if policy.key_valid(websocket.headers.get(API_KEY_HEADER)):
        return True
    try:
        async with asyncio.timeout(AUTH_TIMEOUT):
            frame = await _next_frame(websocket)
    except TimeoutError:
        return False
    message = _parse(frame) if isinstance(frame, str) else None
    return bool(message and message.get("type") == "auth" and policy.key_valid(str(message.get("key") or "")))


def create_app(service: WebUIService, settings: ServerSettings | None = None) -> FastAPI:
    """The app serving ``service``; ``settings`` give the bind host, the key and the allow-lists
    (default: loopback, no key). Raises ConfigError for a key-less bind beyond loopback."""
    settings = settings or ServerSettings(host="127.0.0.1", port=0)
    settings.validate_security()
    install_peer_error_filter()
    policy = SecurityPolicy(settings)
    guard = Depends(http_guard(policy))
    broadcaster: Broadcaster = service.broadcaster
    # No /docs or /openapi.json: they would bypass the Host and key checks.
    app = FastAPI(title="Starweave Galaxy WebUI", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service
    # The agent server's bound on a request body (size and arrival time), here too.
    app.add_middleware(
        BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes, timeout=settings.body_timeout
    )

    @app.middleware("http")
    async def known_hosts_only(request: Request, call_next: Any) -> Any:
        # The page and its files need no key (a browser cannot send one when navigating), but a
        # rebound DNS name must not reach even them.
        if not policy.host_allowed(request.headers.get("host")):
            return JSONResponse({"detail": "Host not allowed"}, status_code=403)
        return await call_next(request)

    # Added last, so it is outermost: the refused-Host 403 carries the headers too.
    app.add_middleware(NoFramingMiddleware)

    @app.get("/", include_in_schema=False)
    async def index() -> Any:
        page = STATIC_DIR / "index.html"
        return FileResponse(page) if page.is_file() else HTMLResponse(FALLBACK_PAGE)

    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/health", dependencies=[guard])
    async def health() -> dict[str, Any]:
        return {
            "status": "healthy",
            "connections": len(broadcaster.pages),
            "events_sent": broadcaster.events_sent,
        }

    @app.get("/api/devices", dependencies=[guard])
    async def list_devices() -> dict[str, Any]:
        return {"devices": service.all_devices()}

    @app.post("/api/devices", dependencies=[guard])
    async def add_device(request: Request) -> dict[str, Any]:
        try:
            body = parse_json(await request.body())
        except ValueError:  # not JSON (nor UTF-8), or nested too deeply
            body = None
        try:
            device = validate_device(body)
            info = await service.add_device(device)
        except DeviceRequestError as exc:
            raise HTTPException(status_code=exc.status, detail=exc.detail) from None
        return {
            "status": "success",
            "message": f"Device '{device.device_id}' added successfully",
            "device": info,
        }

    @app.websocket("/ws")
    async def events(websocket: WebSocket) -> None:
        host, origin = websocket.headers.get("host"), websocket.headers.get("origin")
        if not policy.host_allowed(host) or not policy.origin_allowed(origin, host):
            await websocket.close(code=WS_POLICY_VIOLATION)  # before accept: HTTP 403
            return
        await websocket.accept()
        if settings.api_key and not await _authenticate(websocket, policy):
            await websocket.close(code=WS_POLICY_VIOLATION, reason=KEY_REFUSED)
            return
        page = broadcaster.open_page([service.welcome(), service.device_snapshot(), service.state_snapshot()])
        sender = asyncio.create_task(Broadcaster.serve_page(page, websocket.send_text))
        try:
            await _receive(websocket, service, page, sender, settings.max_message_bytes)
        finally:
            broadcaster.close_page(page)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError, OSError):
                await sender

    return app


def _error(message: str) -> str:
    return encode({"type": "error", "message": message, "timestamp": time.time()})


async def _receive(
    websocket: WebSocket,
    service: WebUIService,
    page: PageQueue,
    sender: asyncio.Task[None],
    max_bytes: int,
) -> None:
    """Handle the page's messages until it goes away (or its sender fails)."""
    while not sender.done():
        try:
            text = await _next_frame(websocket)
        except (WebSocketDisconnect, RuntimeError):
            return
        if text is None:
            return
        problem = _frame_problem(text, max_bytes)
        if problem or isinstance(text, bytes):
            page.put(_error(problem or "Binary frames are not accepted"))
            continue
        message = _parse(text)
        handler = HANDLERS.get(str(message.get("type"))) if message else None
        if message is None or handler is None:
            page.put(_error(f"Unknown message: {text[:100]}"))
            continue
        await handler(service, page, message)
