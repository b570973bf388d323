"""No site may frame our pages: every HTTP response says so (clickjacking protection).

One pure-ASGI middleware, shared by the agent server and the Galaxy WebUI, so every response (the
page, static files, JSON, the 403 of a refused Host) carries the same two headers: the CSP
``frame-ancestors 'none'`` for current browsers and ``X-Frame-Options: DENY`` for older ones.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

NO_FRAMING_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
)


class NoFramingMiddleware:
    """Adds :data:`NO_FRAMING_HEADERS` to every HTTP response (WebSocket traffic passes untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope``, adding the headers to its response start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [header for header in NO_FRAMING_HEADERS if header[0] not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
