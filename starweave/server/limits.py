"""Bounds on what one HTTP request may cost: its body's size and the time it takes to arrive.

:class:`BodyLimitMiddleware` reads the whole body before the app sees it (the API takes small JSON
documents only), so a body over ``max_body_bytes`` gets a clear 413 and a body that trickles in
gets 408, instead of holding a task and a buffer open. It also raises the process's open-file limit,
so that a burst of connections meets the guard (server/guard.py) before it meets EMFILE.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimitMiddleware", "raise_open_file_limit"]

logger = logging.getLogger(__name__)


async def _reply(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _declared_length(scope: Scope) -> int | None:
    """The Content-Length header as an int; -1 when it is present but not a number."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return -1
    return None


class BodyLimitMiddleware:
    """Pure ASGI middleware: 413 above ``max_body_bytes``, 408 when the body takes over ``timeout`` s."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, timeout: float) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared < 0:
            await _reply(send, 400, "Invalid Content-Length header")
            return
        if declared is not None and declared > self.max_body_bytes:
            await _reply(send, 413, self._too_large(declared))
            return
        try:
            async with asyncio.timeout(self.timeout):
                body = await self._read(receive)
        except TimeoutError:
            await _reply(send, 408, f"Request body not received within {self.timeout:g}s")
            return
        if body is None:
            await _reply(send, 413, self._too_large(None))
            return
        if not isinstance(body, bytes):  # the client went away while sending
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_large(self, size: int | None) -> str:
        got = f" ({size} bytes)" if size is not None else ""
        return f"Request body too large{got}: the limit is {self.max_body_bytes} bytes"

    async def _read(self, receive: Receive) -> bytes | Message | None:
        """The whole body; None when it exceeds the limit; the disconnect message if the client left."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return message
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive() that hands out ``body`` once, then defers to the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def raise_open_file_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard limit; returns (soft, hard) as they are now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target: Any = hard
    if hard == resource.RLIM_INFINITY:
        target = max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:  # a container may forbid it; the guard still bounds use
            logger.warning("Could not raise the open-file limit from %d to %d: %s", soft, target, exc)
    return soft, hard
