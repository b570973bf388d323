"""Issue 26 (findings 10 and 15): the Galaxy WebUI bounds what a request or a page may send.

The real WebUI on loopback: a body over the agent server's limit gets 413 before it is parsed, deep
JSON gets a clear 422 or error message, binary and invalid-UTF-8 frames get an error or a close,
and none of it leaves a traceback in the log.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import websockets
from integration.control_plane_kit import webui
from integration.hostile_input_kit import Tracebacks
from integration.hostile_input_kit import tracebacks as tracebacks
from integration.test_webui_add_device import devices_yaml, form

from starweave.server.settings import DEFAULT_MAX_BODY_BYTES, ServerSettings

WAIT = 60.0


async def next_of(page: websockets.ClientConnection, kind: str) -> dict[str, object]:
    """The page's next message of type ``kind`` (within WAIT)."""
    async with asyncio.timeout(WAIT):
        while True:
            frame = json.loads(await page.recv())
            for message in frame if isinstance(frame, list) else [frame]:
                if message.get("type") == kind:
                    return dict(message)


async def test_request_bodies_are_bounded_and_deep_json_is_refused(
    tmp_path: Path, tracebacks: Tracebacks
) -> None:
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(devices_yaml("ws://127.0.0.1:9/ws"))
    before = devices_file.read_text()
    async with (
        webui(tmp_path, devices_file) as (url, _service),
        httpx.AsyncClient(base_url=url, timeout=WAIT) as http,
    ):
        tracebacks.attach()
        # Before the fix a body of any size was read and parsed (50 MiB were).
        for size in (DEFAULT_MAX_BODY_BYTES + 1, 2 * 1024 * 1024):
            big = form("big_1", "ws://127.0.0.1:9/ws")
            big["metadata"] = {"note": "x" * size}
            answer = await http.post("/api/devices", json=big)
            assert answer.status_code == 413 and "too large" in answer.json()["detail"], size
        # Deep JSON: a RecursionError (500, a traceback) before the fix; too deep to store as YAML.
        deep_meta = form("deep_1", "ws://127.0.0.1:9/ws")
        for body in (
            b"[" * 100_000,
            b'{"device_id": "deep_1", "metadata": ' + b"[" * 50_000,
            json.dumps(deep_meta).replace('"metadata": {}', '"metadata": ' + "[" * 900 + "]" * 900).encode(),
            b"\xff\xfe not UTF-8",
        ):
            answer = await http.post(
                "/api/devices", content=body, headers={"content-type": "application/json"}
            )
            assert answer.status_code == 422, (body[:40], answer.text)
            assert "\n" not in answer.json()["detail"]
        ok = await http.post("/api/devices", json=form("fine_1", "ws://127.0.0.1:9/ws", auto_connect=False))
        assert ok.status_code == 200, ok.text
    assert "deep_1" not in devices_file.read_text() and devices_file.read_text().startswith(before)
    assert tracebacks.seen == []


async def test_hostile_frames_get_an_error_or_a_close_and_no_traceback(
    tmp_path: Path, tracebacks: Tracebacks
) -> None:
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(devices_yaml("ws://127.0.0.1:9/ws"))
    limits = ServerSettings(host="127.0.0.1", port=0)
    async with webui(tmp_path, devices_file) as (url, _service):
        tracebacks.attach()
        ws_url = url.replace("http", "ws") + "/ws"
        async with websockets.connect(ws_url, max_size=None) as page:
            await next_of(page, "welcome")
            for frame, why in (
                (b"\x00\x01 binary", "Binary frames"),
                ("[" * 100_000, "Unknown message"),
                ('{"type": "ping", "x": ' + "[" * 900 + "]" * 900 + "}", "Unknown message"),
                (
                    json.dumps({"type": "request", "text": "x" * (limits.max_message_bytes + 1)}),
                    "exceeds the limit",
                ),
            ):
                # Before the fix a binary frame raised KeyError and deep JSON RecursionError in the
                # handler (a traceback, the page cut off).
                await page.send(frame)
                error = await next_of(page, "error")
                assert why in str(error["message"]), (why, error)
            await page.send(json.dumps({"type": "ping"}))
            await next_of(page, "pong")  # the page is still served
            # Above uvicorn's frame limit (16 MiB by default before the fix): the connection is closed.
            await page.send("y" * (limits.ws_max_size + 1))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await next_of(page, "never")
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        async with websockets.connect(ws_url) as page:
            await next_of(page, "welcome")
            await page.send(b"\xff\xfe", text=True)  # a text frame that is not UTF-8
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await next_of(page, "never")
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
    assert tracebacks.seen == []
