"""The agent server's HTTP answers forbid framing, like the WebUI's (server/frame_guard.py)."""

from __future__ import annotations

import httpx
from unit.server.server_kit import running_server

KEY = "no-framing-key"


async def test_every_agent_server_answer_forbids_framing() -> None:
    async with (
        running_server(api_key=KEY, require_key_on_loopback=True) as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as http,
    ):
        answers = [
            await http.get("/api/health", headers={"X-API-Key": KEY}),
            await http.get("/api/health"),
            await http.get("/api/health", headers={"Host": "evil.example"}),
            await http.get("/nowhere", headers={"X-API-Key": KEY}),
        ]
        assert [a.status_code for a in answers] == [200, 401, 403, 404]
        for answer in answers:
            assert answer.headers["content-security-policy"] == "frame-ancestors 'none'", answer.url
            assert answer.headers["x-frame-options"] == "DENY", answer.url
