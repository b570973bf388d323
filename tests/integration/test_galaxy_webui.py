"""The Galaxy WebUI backend end to end in one process: a --local 2 fleet on the replay provider,
the app on a real uvicorn server, pages as real WebSocket clients."""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import websockets
import yaml
from e2e.test_galaxy_cli import DEVICE, write

from starweave.errors import ConfigError
from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.galaxy.webui import WebUIService, create_app
from starweave.server.app import serve_in_task
from starweave.server.settings import ServerSettings

DEVICES = ["local_linux_1", "local_linux_2"]
PLAN = {
    "thought": "one task per device",
    "status": "CONTINUE",
    "constellation": {
        "tasks": [
            {"task_id": f"t{i}", "name": f"greet {i}", "description": "Write hello.", "target_device_id": d}
            for i, d in enumerate(DEVICES, 1)
        ],
        # t2 after t1: the plan ends in one task, so it finishes without an answer-only call.
        "dependencies": [{"from_task_id": "t1", "to_task_id": "t2"}],
    },
}
DEVICES_YAML = (
    "# added from the page\ndevices:\n  - device_id: remote_1\n    server_url: ws://10.0.0.9:5000/ws\n"
)


def options(tmp_path: Path, local: int = 2, **extra: Any) -> GalaxyOptions:
    return GalaxyOptions(
        local=local,
        provider="replay",
        replay_file=write(tmp_path / "planner.jsonl", [PLAN, PLAN]),
        device_replay_file=write(tmp_path / "device.jsonl", DEVICE),
        log_dir=tmp_path / "logs",
        workspace=tmp_path / "ws",
        live=False,
        yes=True,
        **extra,
    )


@asynccontextmanager
async def serving(service: WebUIService, settings: ServerSettings | None = None) -> AsyncIterator[str]:
    """The app on 127.0.0.1, a free port; yields ``http://127.0.0.1:PORT``."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(service, settings), host="127.0.0.1", port=0, log_level="warning", lifespan="off"
        )
    )
    task, port = await serve_in_task(server)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def receive(ws: Any, until: Any, seconds: float = 60) -> list[dict[str, Any]]:
    """Messages until one satisfies ``until`` (included)."""
    out: list[dict[str, Any]] = []
    waiting = _unread.setdefault(ws, [])
    async with asyncio.timeout(seconds):
        while True:
            if not waiting:
                frame = json.loads(await ws.recv())  # one message, or several as a JSON array
                waiting.extend(frame if isinstance(frame, list) else [frame])
            message = waiting.pop(0)
            out.append(message)
            if until(message):
                return out


# Messages of a frame not read yet, per page. Keyed by the connection itself, not id(): a closed
# page's id can be reused by the next connection, which would then read the old page's leftovers.
_unread: weakref.WeakKeyDictionary[Any, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def kind(message: dict[str, Any]) -> str:
    return str(message.get("type") or message.get("event_type"))


async def test_a_page_drives_a_request_and_a_second_page_sees_the_same(tmp_path: Path) -> None:
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(DEVICES_YAML)
    # --local with a devices file: the fleet runs locally, and devices added from the page go to the file.
    service = WebUIService(GalaxyClient(options(tmp_path, devices_file=devices_file)))
    try:
        async with asyncio.timeout(120):
            await service.start()
            async with serving(service) as url, httpx.AsyncClient(base_url=url) as http:
                ws_url = url.replace("http", "ws") + "/ws"
                async with websockets.connect(ws_url) as first, websockets.connect(ws_url) as second:
                    for page in (first, second):
                        opening = await receive(page, lambda m: kind(m) == "state_snapshot")
                        assert [kind(m) for m in opening] == ["welcome", "device_snapshot", "state_snapshot"]
                        welcome, devices, state = opening
                        assert welcome["message"] == "Connected to Galaxy Web UI"
                        assert set(welcome["session"]) == {"id", "display_name", "started_at"}
                        assert devices["data"] == {"event_name": "device_snapshot", "device_count": 2}
                        assert devices["source_id"] == "webui.server"
                        assert {d["status"] for d in devices["all_devices"].values()} == {"idle"}
                        assert state["running"] is False and state["constellation"] is None
                    health = (await http.get("/health")).json()
                    assert health["status"] == "healthy" and health["connections"] == 2

                    await first.send(json.dumps({"type": "request", "text": "say hi", "timestamp": 1.0}))
                    await first.send(json.dumps({"type": "request", "text": "again", "timestamp": 2.0}))
                    seen = await receive(first, lambda m: m.get("final") is True)
                    busy = [m for m in seen if kind(m) == "error"]
                    assert [m["message"] for m in busy] == [
                        "A request is already running; wait for it or reset the session"
                    ]
                    seen = [m for m in seen if kind(m) != "error"]
                    mirrored = await receive(second, lambda m: m.get("final") is True)
                    kinds = [kind(m) for m in seen]
                    assert kinds[0] == "chat" and seen[0]["role"] == "user" and seen[0]["text"] == "say hi"
                    assert kinds.count("task_completed") == 2 and "constellation_started" in kinds
                    thoughts = [m["text"] for m in seen if kind(m) == "chat" and m["role"] == "agent"]
                    assert thoughts[0] == "one task per device"
                    final = seen[-1]
                    assert final["status"] == "FINISH" and "t1 on local_linux_1: done" in final["text"]
                    done = [m for m in seen if kind(m) == "task_completed"]
                    assert all(m["status"] == "completed" for m in done)
                    assert done[-1]["data"]["constellation"]["task_count"] == 2  # a summary in task events
                    (completed,) = [m for m in seen if kind(m) == "constellation_completed"]
                    dag = completed["data"]["constellation"]  # the full DAG in constellation events
                    assert {t["status"] for t in dag["tasks"].values()} == {"completed"}
                    # The second page saw the same stream.
                    assert [kind(m) for m in mirrored] == kinds

                    await service.wait_idle()
                    await first.send(json.dumps({"type": "ping", "timestamp": 3.0}))
                    assert kind((await receive(first, lambda m: kind(m) == "pong"))[-1]) == "pong"

                    # A reload gets the current state back.
                    async with websockets.connect(ws_url) as reloaded:
                        state = (await receive(reloaded, lambda m: kind(m) == "state_snapshot"))[-1]
                    assert [m["text"] for m in state["messages"]][:2] == ["say hi", "one task per device"]
                    assert state["constellation"]["tasks"]["t1"]["status"] == "completed"
                    assert any(e["event_type"] == "task_completed" for e in state["events"])
                    assert all(
                        "tasks" not in (e["data"].get("constellation") or {}) for e in state["events"]
                    )  # summaries in the event log
                    assert (await http.get("/health")).json()["events_sent"] > 10

                    # Devices from the page.
                    bad = await http.post(
                        "/api/devices", json={"device_id": "x", "server_url": "http://h/ws"}
                    )
                    assert (bad.status_code, bad.json()) == (422, {"detail": "Invalid WebSocket URL"})
                    body = {
                        "device_id": "remote_2",
                        "server_url": "ws://10.0.0.9:5001/ws",
                        "os": "linux",
                        "capabilities": ["shell"],
                        "metadata": {},
                        "auto_connect": False,
                        "max_retries": 1,
                    }
                    added = await http.post("/api/devices", json=body)
                    assert added.status_code == 200, added.text
                    assert added.json()["message"] == "Device 'remote_2' added successfully"
                    assert added.json()["device"]["device_id"] == "remote_2"
                    snapshot = (await receive(first, lambda m: kind(m) == "device_snapshot"))[-1]
                    assert set(snapshot["all_devices"]) == {*DEVICES, "remote_2"}
                    assert devices_file.read_text().startswith(DEVICES_YAML)
                    ids = [d["device_id"] for d in yaml.safe_load(devices_file.read_text())["devices"]]
                    assert ids == ["remote_1", "remote_2"]
                    again = await http.post("/api/devices", json=body)
                    assert (again.status_code, again.json()) == (
                        409,
                        {"detail": "Device ID 'remote_2' already exists"},
                    )
                    fleet = await http.post("/api/devices", json={**body, "device_id": "local_linux_1"})
                    assert fleet.status_code == 409
                    listed = (await http.get("/api/devices")).json()["devices"]
                    assert set(listed) == {*DEVICES, "remote_2"}

                    # Reset clears the chat and the DAG for every page; the devices stay.
                    await second.send(json.dumps({"type": "reset", "timestamp": 4.0}))
                    for page in (first, second):
                        fresh = (await receive(page, lambda m: kind(m) == "state_snapshot"))[-1]
                        assert (
                            fresh["messages"] == []
                            and fresh["events"] == []
                            and fresh["constellation"] is None
                        )
                    assert len(service.client.device_manager.get_connected_devices()) == 2  # type: ignore[union-attr]
    finally:
        await service.aclose()


async def test_a_local_session_without_a_devices_file_answers_404(tmp_path: Path) -> None:
    service = WebUIService(GalaxyClient(options(tmp_path)))  # not started: no fleet needed here
    async with serving(service) as url, httpx.AsyncClient(base_url=url) as http:
        body = {"device_id": "d", "server_url": "ws://h:1/ws", "os": "linux", "capabilities": ["shell"]}
        answer = await http.post("/api/devices", json=body)
        assert (answer.status_code, answer.json()) == (404, {"detail": "devices.yaml not found"})
        empty = await http.post("/api/devices", json={})
        assert (empty.status_code, empty.json()) == (422, {"detail": "Device ID is required"})


async def test_foreign_hosts_and_origins_are_refused(tmp_path: Path) -> None:
    service = WebUIService(GalaxyClient(options(tmp_path)))
    async with serving(service) as url, httpx.AsyncClient(base_url=url) as http:
        assert (await http.get("/health", headers={"Host": "evil.example"})).status_code == 403
        assert (await http.get("/", headers={"Host": "evil.example"})).status_code == 403
        assert (await http.get("/health", headers={"Origin": "http://evil.example"})).status_code == 403
        assert (await http.get("/")).status_code == 200
        ws_url = url.replace("http", "ws") + "/ws"
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(ws_url, origin="http://evil.example"):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403
        async with websockets.connect(ws_url, origin=url) as page:  # type: ignore[arg-type]
            assert kind((await receive(page, lambda m: True))[0]) == "welcome"


async def test_off_loopback_a_key_is_required_and_never_read_from_the_url(tmp_path: Path) -> None:
    service = WebUIService(GalaxyClient(options(tmp_path)))
    with pytest.raises(ConfigError, match="API key is required"):
        create_app(service, ServerSettings(host="0.0.0.0", port=0))
    # The policy of a 0.0.0.0 bind with a key, served on loopback for the test.
    settings = ServerSettings(host="0.0.0.0", port=0, api_key="sekret-key-123")
    async with serving(service, settings) as url, httpx.AsyncClient(base_url=url) as http:
        assert (await http.get("/health")).status_code == 401
        assert (await http.get("/health", headers={"X-API-Key": "wrong"})).status_code == 401
        assert (await http.get("/health", headers={"X-API-Key": "sekret-key-123"})).status_code == 200
        assert (await http.get("/")).status_code == 200  # the page itself loads, then sends the key
        ws_url = url.replace("http", "ws") + "/ws"
        async with websockets.connect(ws_url + "?token=sekret-key-123") as page:
            await page.send(json.dumps({"type": "ping"}))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await page.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        async with websockets.connect(ws_url) as page:
            await page.send(json.dumps({"type": "auth", "key": "sekret-key-123"}))
            assert kind((await receive(page, lambda m: True))[0]) == "welcome"
        async with websockets.connect(ws_url, additional_headers={"X-API-Key": "sekret-key-123"}) as page:
            assert kind((await receive(page, lambda m: True))[0]) == "welcome"


async def test_no_site_may_frame_the_webui(tmp_path: Path) -> None:
    service = WebUIService(GalaxyClient(options(tmp_path)))
    key = "sekret-key-123"
    settings = ServerSettings(host="127.0.0.1", port=0, api_key=key, require_key_on_loopback=True)
    async with serving(service, settings) as url, httpx.AsyncClient(base_url=url) as http:
        answers = [
            await http.get("/"),
            await http.get("/health"),  # 401: refusals say it too
            await http.get("/", headers={"Host": "evil.example"}),  # 403 of the Host check
            await http.get("/health", headers={"X-API-Key": "sekret-key-123"}),
            await http.get("/static/app.js"),
        ]
        assert [a.status_code for a in answers] == [200, 401, 403, 200, 200]
        for answer in answers:
            assert answer.headers["content-security-policy"] == "frame-ancestors 'none'", answer.url
            assert answer.headers["x-frame-options"] == "DENY", answer.url
