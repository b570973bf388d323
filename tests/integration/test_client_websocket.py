"""The device client against a tiny scripted WebSocket server (real sockets on loopback)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from unit.client.virtual_time import VirtualTime, until
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    Command,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
)
from starweave.aip.resilience import ReconnectionStrategy
from starweave.client.runner import ClientOptions, build_device_client, run_device_client
from starweave.client.websocket import EXIT_GAVE_UP, EXIT_OK, EXIT_REFUSED, DeviceWebSocketClient

WAIT = 15.0


class ScriptedServer:
    """Hands every accepted connection to the test, which plays the server side on it."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.connections: asyncio.Queue[ServerConnection] = asyncio.Queue()
        self.requests: list[Request] = []
        self.server: Server | None = None

    async def handler(self, ws: ServerConnection) -> None:
        await self.connections.put(ws)
        await ws.wait_closed()

    def check_token(self, ws: ServerConnection, request: Request) -> Response | None:
        self.requests.append(request)
        if self.token is not None and f"token={self.token}" not in request.path:
            return ws.respond(HTTPStatus.FORBIDDEN, "invalid API key\n")
        return None

    @property
    def url(self) -> str:
        assert self.server is not None
        port = next(iter(self.server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/ws"

    async def accept(self) -> ServerConnection:
        return await asyncio.wait_for(self.connections.get(), WAIT)


async def recv(ws: ServerConnection) -> ClientMessage:
    return ClientMessage.model_validate_json(await asyncio.wait_for(ws.recv(), WAIT))


async def recv_of(ws: ServerConnection, kind: ClientMessageType) -> ClientMessage:
    """The next message of ``kind``; heartbeats in between are acknowledged."""
    while True:
        message = await recv(ws)
        if message.type == kind:
            return message
        assert message.type == ClientMessageType.HEARTBEAT, message
        await send(ws, ServerMessage(type=ServerMessageType.HEARTBEAT, response_id="ack"))


async def send(ws: ServerConnection, message: ServerMessage) -> None:
    await ws.send(message.model_dump_json(exclude_none=True))


async def confirm(ws: ServerConnection) -> ClientMessage:
    register = await recv(ws)
    assert register.type == ClientMessageType.REGISTER
    await send(ws, ServerMessage(type=ServerMessageType.HEARTBEAT, status=TaskStatus.OK, response_id="reg"))
    return register


@pytest.fixture
async def server() -> AsyncIterator[ScriptedServer]:
    scripted = ScriptedServer(token="s3cret")
    async with serve(scripted.handler, "127.0.0.1", 0, process_request=scripted.check_token) as srv:
        scripted.server = srv
        yield scripted


def options(tmp_path: Path, url: str, **kwargs: Any) -> ClientOptions:
    config_dir = tmp_path / "cfg"
    config_dir.mkdir(exist_ok=True)
    defaults: dict[str, Any] = {
        "ws_url": url,
        "client_id": "dev-1",
        "platform": "linux",
        "workspace": tmp_path / "ws",
        "config_dir": config_dir,
        "max_retries": 3,
        "heartbeat_interval": 30.0,
        "initial_backoff": 0.01,
        "max_backoff": 0.05,
        "registration_timeout": 5.0,
    }
    defaults.update(kwargs)
    return ClientOptions(**defaults)


async def test_full_flow_then_reconnect_after_the_server_drops(
    server: ScriptedServer, tmp_path: Path
) -> None:
    opts = options(tmp_path, server.url, api_key="s3cret")
    device = build_device_client(opts)
    # Heartbeats and the dead-server watchdog run on virtual time: a loaded machine cannot make
    # the client think the (scripted, not always answering) server is dead mid-test.
    clock = VirtualTime()
    client = DeviceWebSocketClient(
        opts.ws_url,
        device,
        api_key=opts.api_key,
        heartbeat_interval=opts.heartbeat_interval,
        reconnection_strategy=ReconnectionStrategy(max_retries=3, initial_backoff=0.01, max_backoff=0.05),
        sleep=clock.sleep,
        clock=clock.clock,
    )
    running = asyncio.create_task(client.connect_and_listen())
    try:
        ws = await server.accept()
        assert "token=s3cret" in server.requests[0].path
        assert server.requests[0].headers["X-API-Key"] == "s3cret"
        register = await confirm(ws)
        assert register.client_id == "dev-1" and register.client_type == "device"
        assert {"platform", "system_info", "registration_time"} <= set(register.metadata or {})

        await clock.wait_sleepers(2)
        await clock.advance(opts.heartbeat_interval)
        heartbeat = await recv(ws)
        assert heartbeat.type == ClientMessageType.HEARTBEAT and heartbeat.client_id == "dev-1"

        await send(ws, ServerMessage(type="task", user_request="make f.txt", task_name="t1", session_id="s1"))
        task = await recv_of(ws, ClientMessageType.TASK)
        assert (task.request, task.task_name, task.session_id, task.client_id) == (
            "make f.txt",
            "t1",
            "s1",
            "dev-1",
        )

        action = Command(
            tool_name="execute_command",
            parameters={"command": "echo hi > f.txt"},
            tool_type="action",
            call_id="c1",
        )
        await send(
            ws,
            ServerMessage(
                type=ServerMessageType.COMMAND,
                status=TaskStatus.CONTINUE,
                actions=[action],
                session_id="s1",
                response_id="resp-1",
                agent_name="LinuxAgent",
            ),
        )
        results = await recv_of(ws, ClientMessageType.COMMAND_RESULTS)
        assert results.prev_response_id == "resp-1" and results.status == TaskStatus.CONTINUE
        assert [r.status for r in results.action_results or []] == ["success"]
        assert (tmp_path / "ws" / "f.txt").read_text() == "hi\n"
        await send(
            ws,
            ServerMessage(
                type=ServerMessageType.TASK_END, status=TaskStatus.COMPLETED, session_id="s1", result={}
            ),
        )

        await ws.close(1001, "server restarting")
        again = await server.accept()
        assert (await confirm(again)).client_id == "dev-1"
        await asyncio.wait_for(_registrations(client, 2), WAIT)
        await client.stop()
        assert await asyncio.wait_for(running, WAIT) == EXIT_OK
    finally:
        running.cancel()
        await device.aclose()


async def _registrations(client: DeviceWebSocketClient, count: int) -> None:
    await until(lambda: client.registrations >= count and client.is_connected(), f"{count} registrations")


async def test_error_on_register_exits_non_zero_with_the_reason(
    server: ScriptedServer, tmp_path: Path
) -> None:
    async def refuse() -> int:
        refused = 0
        while True:
            ws = await server.accept()
            await recv(ws)
            await send(ws, ServerMessage(type=ServerMessageType.ERROR, error="Client ID already exists"))
            await ws.close()
            refused += 1

    refusing = asyncio.create_task(refuse())
    reports: list[str] = []
    try:
        code = await asyncio.wait_for(
            run_device_client(options(tmp_path, server.url, api_key="s3cret", max_retries=2), reports.append),
            WAIT,
        )
    finally:
        refusing.cancel()
    assert code == EXIT_GAVE_UP
    assert len(reports) == 1 and "Client ID already exists" in reports[0] and "gave up after 2" in reports[0]


async def test_bad_token_is_refused_at_once_without_retrying(server: ScriptedServer, tmp_path: Path) -> None:
    reports: list[str] = []
    code = await asyncio.wait_for(
        run_device_client(options(tmp_path, server.url, api_key="wrong", max_retries=5), reports.append), WAIT
    )
    assert code == EXIT_REFUSED
    assert len(server.requests) == 1
    assert "HTTP 403" in reports[0] and "invalid API key" in reports[0] and "check the API key" in reports[0]


async def test_close_1008_on_register_is_fatal(server: ScriptedServer, tmp_path: Path) -> None:
    async def close_policy() -> None:
        ws = await server.accept()
        await recv(ws)
        await ws.close(1008, "Invalid or missing API key")

    closing = asyncio.create_task(close_policy())
    reports: list[str] = []
    code = await asyncio.wait_for(
        run_device_client(options(tmp_path, server.url, api_key="s3cret"), reports.append), WAIT
    )
    await closing
    assert code == EXIT_REFUSED and "1008" in reports[0] and "Invalid or missing API key" in reports[0]


async def test_unreachable_server_gives_up_after_max_retries(tmp_path: Path) -> None:
    reports: list[str] = []
    code = await asyncio.wait_for(
        run_device_client(
            options(tmp_path, "ws://127.0.0.1:1/ws", api_key="hush", max_retries=3), reports.append
        ),
        WAIT,
    )
    assert code == EXIT_GAVE_UP
    assert "gave up after 3 failed connection attempt(s) to ws://127.0.0.1:1/ws" in reports[0]
    assert "cannot connect" in reports[0] and "hush" not in reports[0]  # the token never leaks


async def test_frames_are_text_json(server: ScriptedServer, tmp_path: Path) -> None:
    opts = options(tmp_path, server.url, api_key="s3cret")
    device = build_device_client(opts)
    client = DeviceWebSocketClient(opts.ws_url, device, api_key=opts.api_key, heartbeat_interval=30.0)
    running = asyncio.create_task(client.connect_and_listen())
    try:
        ws = await server.accept()
        frame = await asyncio.wait_for(ws.recv(), WAIT)
        assert isinstance(frame, str) and json.loads(frame)["type"] == "register"
        await client.stop()
        assert await asyncio.wait_for(running, WAIT) == EXIT_OK
    finally:
        running.cancel()
        await device.aclose()
