"""A real, tiny OpenAI-compatible HTTP server for tests: it records requests and answers as told."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer:
    """Answers POST /v1/chat/completions with ``status`` and ``body``; keeps every request it got.

    ``queue``, when not empty, holds bodies answered in turn before ``body`` is used; ``responder``,
    when set, computes the body from the request instead (an embeddings endpoint).
    """

    def __init__(self) -> None:
        self.status = 200
        self.body: dict[str, Any] = {}
        self.responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.queue: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.base_url = ""


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    """Run a :class:`ScriptedServer` on a free loopback port for the duration of the block."""
    state = ScriptedServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(request)
            state.headers.append(dict(self.headers))
            if state.queue:
                body = state.queue.pop(0)
            else:
                body = state.responder(request) if state.responder is not None else state.body
            payload = json.dumps(body).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def chat_answer(content: str, model: str = "gpt-4o-mini-2024-07-18") -> dict[str, Any]:
    """An OpenAI chat.completion body."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        ],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
    }
