"""A real loopback HTTP server speaking the Bing Web Search v7 API's JSON, for tests of online search."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from helpers.fake_openai_server import send_json, serving


def bing_answer(*pages: tuple[str, str, str]) -> dict[str, Any]:
    """An answer of the API listing ``(name, url, snippet)`` web pages."""
    value = [{"id": str(n), "name": a, "url": b, "snippet": c} for n, (a, b, c) in enumerate(pages)]
    return {"_type": "SearchResponse", "webPages": {"totalEstimatedMatches": len(value), "value": value}}


@dataclass
class FakeBing:
    """What the server answers (``status`` and ``body``: JSON-able, or raw bytes), what it got
    (``queries``: the query string of each GET, ``keys``: its subscription-key header), and
    ``hang``: when set, a request waits until ``release`` is set (a timeout test)."""

    status: int = 200
    body: Any = field(default_factory=dict)
    queries: list[dict[str, list[str]]] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    hang: bool = False
    release: threading.Event = field(default_factory=threading.Event)
    endpoint: str = ""


@contextmanager
def fake_bing() -> Iterator[FakeBing]:
    """Run a :class:`FakeBing` on a free loopback port; its ``endpoint`` is the search address."""
    state = FakeBing()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            state.paths.append(url.path)
            state.queries.append(parse_qs(url.query))
            state.keys.append(self.headers.get("Ocp-Apim-Subscription-Key"))
            if state.hang:
                state.release.wait(timeout=30)
            payload = state.body if isinstance(state.body, bytes) else json.dumps(state.body).encode()
            send_json(self, state.status, payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    with serving(Handler) as origin:
        state.endpoint = f"{origin}/v7.0/search"
        try:
            yield state
        finally:
            state.release.set()
