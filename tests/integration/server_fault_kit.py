"""A real agent server (LinuxAgent on the replay provider) and real device clients, for fault tests."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from starweave.aip.resilience import ReconnectionStrategy
from starweave.client.credentials import TokenStore
from starweave.client.runner import ClientOptions, build_device_client, probe_device
from starweave.client.websocket import DeviceWebSocketClient
from starweave.config import load_config
from starweave.server.app import RunningServer, start_server
from starweave.server.settings import ServerSettings
from starweave.session.service import LinuxServiceSessionFactory

WAIT = 60.0  # generous: only a failing test waits this long


def step(command: str | None, status: str = "CONTINUE", result: str = "") -> dict[str, Any]:
    action = (
        {"function": "execute_command", "arguments": {"command": command}, "status": status}
        if command
        else {"function": "", "arguments": {}, "status": status}
    )
    return {"observation": "o", "thought": "t", "action": action, "result": result}


QUICK = [step("echo hello >> out.txt"), step(None, "FINISH", "wrote out.txt")]


@asynccontextmanager
async def agent_server(
    tmp: Path,
    answers: list[Any] = QUICK,
    blocks: tuple[str, ...] = ("APP_AGENT",),
    name: str = "answers",
    **settings: Any,
) -> AsyncIterator[RunningServer]:
    """start_server with the LinuxAgent replaying ``answers`` in every session (``blocks``: the
    model blocks that replay them, e.g. HOST_AGENT too for desktop devices; ``name``: of the
    replay file, so that several servers can share ``tmp``)."""
    replay = tmp / f"{name}.jsonl"
    replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    block = {"API_TYPE": "replay", "REPLAY_FILE": str(replay)}
    config = load_config(
        env={},
        overrides={**{key: dict(block) for key in blocks}, "system": {"LOG_DIR": str(tmp / "logs")}},
    )
    factory = LinuxServiceSessionFactory(config, auto_approve=True)
    server = await start_server(
        ServerSettings(host="127.0.0.1", port=0, log_level="warning", **settings), factory
    )
    try:
        yield server
    finally:
        await server.stop()
        await factory.aclose()


@asynccontextmanager
async def device(
    tmp: Path,
    server: RunningServer,
    client_id: str,
    api_key: str | None = None,
    platform: str = "linux",
    **options: Any,
) -> AsyncIterator[DeviceWebSocketClient]:
    """A real device client (tool stack in-process) of ``platform``, checked as ``starweave client``
    checks it (a phone: ``adb devices``) and registered before it is yielded; ``options``: more
    ClientOptions fields (a phone's ``serial`` and ``adb_path``)."""
    config_dir = tmp / "config"
    config_dir.mkdir(exist_ok=True)
    settings = ClientOptions(
        client_id=client_id,
        platform=platform,
        workspace=tmp / f"ws-{client_id}",
        config_dir=config_dir,
        **options,
    )
    tools = build_device_client(settings)
    await probe_device(tools)
    client = DeviceWebSocketClient(
        f"ws://127.0.0.1:{server.port}/ws",
        tools,
        api_key=api_key,
        reconnection_strategy=ReconnectionStrategy(max_retries=None, initial_backoff=0.2, max_backoff=2.0),
        token_store=TokenStore(tmp / f"state-{client_id}"),
    )
    running = asyncio.create_task(client.connect_and_listen())
    try:
        await until(lambda: client.is_connected() or running.done(), f"{client_id} registered")
        assert not running.done(), client.last_error
        yield client
    finally:
        await client.stop()
        await asyncio.wait({running}, timeout=WAIT)
        await tools.aclose()


async def until(check: Callable[[], Any], what: str, limit: float = WAIT) -> None:
    """Poll ``check`` until true; fail after ``limit`` real seconds."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def result_of(http: httpx.AsyncClient, task_name: str, limit: float = WAIT) -> dict[str, Any]:
    """/api/task_result once the task is done."""
    deadline = time.monotonic() + limit
    while True:
        body: dict[str, Any] = (await http.get(f"/api/task_result/{task_name}")).json()
        if body.get("status") == "done":
            return body
        assert time.monotonic() < deadline, f"{task_name} still {body}"
        await asyncio.sleep(0.05)


async def dispatch(
    http: httpx.AsyncClient, client_id: str, request: str, task_name: str | None = None
) -> httpx.Response:
    """POST /api/dispatch."""
    body = {"client_id": client_id, "request": request}
    if task_name is not None:
        body["task_name"] = task_name
    return await http.post("/api/dispatch", json=body)
