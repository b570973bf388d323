"""Online search for the prompt's knowledge slot (``RAG_ONLINE_SEARCH``): the Bing Web Search v7 API.

The documented call is ``GET {endpoint}?q=<query>&count=<n>`` with the subscription key in the
``Ocp-Apim-Subscription-Key`` header; the answer's ``webPages.value`` lists the results, each with
``name``, ``url`` and ``snippet``. The key is a secret: it goes into that header only, never into
an error message (the session's logs redact it too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from starweave.errors import StarweaveError

DEFAULT_ENDPOINT = "https://api.bing.microsoft.com/v7.0/search"
KEY_HEADER = "Ocp-Apim-Subscription-Key"
#: Seconds a search may take: the step waits for it, and the run goes on without it when it fails.
DEFAULT_TIMEOUT = 10.0
#: Bing answers at most 50 results per call.
MAX_COUNT = 50


class SearchError(StarweaveError):
    """An online search failed (network, HTTP status, an answer that is not the API's JSON)."""


@dataclass(frozen=True)
class WebResult:
    """One web page Bing found."""

    name: str
    url: str
    snippet: str

    def render(self) -> str:
        """The page as a passage: its title and address, then the snippet."""
        return f"{self.name} ({self.url})\n{self.snippet}"


def parse_results(payload: Any) -> list[WebResult]:
    """The pages of a Bing answer (``webPages.value``); an answer without web pages has none.

    Raises SearchError when ``payload`` is not the API's shape."""
    if not isinstance(payload, dict):
        raise SearchError(f"the answer is a JSON {type(payload).__name__}, not an object")
    pages = payload.get("webPages") or {}
    values = pages.get("value") if isinstance(pages, dict) else None
    if values is None:
        return []
    if not isinstance(values, list):
        raise SearchError("webPages.value is not a list")
    return [
        WebResult(str(v.get("name") or ""), str(v.get("url") or ""), str(v.get("snippet") or ""))
        for v in values
        if isinstance(v, dict) and (v.get("snippet") or v.get("name"))
    ]


class BingSearch:
    """Searches the web through the Bing Web Search v7 API with one subscription key."""

    def __init__(
        self,
        api_key: str,
        endpoint: str = DEFAULT_ENDPOINT,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key = api_key
        self.endpoint = endpoint
        self.timeout = timeout
        self._transport = transport

    async def search(self, query: str, count: int) -> list[WebResult]:
        """The first ``count`` pages Bing finds for ``query``; raises SearchError on any failure."""
        if not query.strip() or count <= 0:
            return []
        params = {"q": query, "count": str(min(count, MAX_COUNT))}
        headers = {KEY_HEADER: self._api_key, "Accept": "application/json"}
        try:
            async with httpx.AsyncClient(timeout=self.timeout, transport=self._transport) as client:
                response = await client.get(self.endpoint, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise SearchError(f"no answer from {self.endpoint} within {self.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise SearchError(f"cannot reach {self.endpoint}: {type(exc).__name__}: {exc}") from exc
        if response.status_code != httpx.codes.OK:
            raise SearchError(f"{self.endpoint} answered HTTP {response.status_code}{_reason(response)}")
        try:
            payload = response.json()
        except ValueError as exc:
            raise SearchError(f"{self.endpoint} answered something that is not JSON") from exc
        return parse_results(payload)[:count]


def _reason(response: httpx.Response) -> str:
    """The API's error message, when its answer carries one (``error.message``)."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        return ""
    message = error.get("message") if isinstance(error, dict) else None
    return f": {' '.join(str(message).split())[:200]}" if message else ""
