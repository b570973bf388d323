"""Shared test kit for the agent server: a fake service session and a real uvicorn on port 0."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

from websockets.asyncio.client import ClientConnection, connect

from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ClientType,
    Command,
    Result,
    ResultStatus,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    new_id,
    parse_server_message,
)
from starweave.errors import SessionError
from starweave.server.app import RunningServer, start_server
from starweave.server.sessions import SendFn
from starweave.server.settings import ServerSettings

TIMEOUT = 30.0  # generous: only a failing test waits this long


class FakeSession:
    """Sends one COMMAND through ``send``, waits for its result, then finishes.

    The request steers it: "fail" → is_error; "limbo" → neither finished nor error;
    "hang" → waits forever without sending (to test cancellation and non-blocking lookups).
    """

    created: ClassVar[list[FakeSession]] = []

    def __init__(self, session_id: str, task_name: str, request: str, send: SendFn, platform: str) -> None:
        self.id = session_id
        self.task_name = task_name
        self.request = request
        self.platform = platform
        self.results: dict[str, Any] = {}
        self._send = send
        self._waiters: dict[str, asyncio.Future[ClientMessage]] = {}
        self._finished = False
        self._error = False
        self.cancelled = False
        FakeSession.created.append(self)

    async def run(self) -> None:
        try:
            if self.request == "hang":
                await asyncio.Event().wait()
            response_id = new_id()
            future: asyncio.Future[ClientMessage] = asyncio.get_running_loop().create_future()
            self._waiters[response_id] = future
            await self._send(
                ServerMessage(
                    type=ServerMessageType.COMMAND,
                    status=TaskStatus.CONTINUE,
                    actions=[
                        Command(tool_name="echo", parameters={"text": self.request}, tool_type="action")
                    ],
                    session_id=self.id,
                    response_id=response_id,
                    agent_name="LinuxAgent",
                    process_name="",
                    root_name="",
                )
            )
            answer = await future
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        results = answer.action_results or []
        self.results = {"echo": results[0].result if results else None}
        if self.request == "fail":
            self._error, self.results = True, {}
        elif self.request != "limbo":
            self._finished = True

    def is_error(self) -> bool:
        return self._error

    def is_finished(self) -> bool:
        return self._finished

    async def set_result(self, response_id: str, message: ClientMessage) -> None:
        future = self._waiters.pop(response_id, None)
        if future is None:
            raise SessionError(f"No command is waiting for response id '{response_id}'")
        future.set_result(message)


def fake_factory(**kwargs: Any) -> FakeSession:
    """Refuses the request "refuse" the way the real factory refuses an empty request."""
    if kwargs["request"] == "refuse":
        raise SessionError("the task request is refused by the factory")
    return FakeSession(**kwargs)


def settings(**overrides: Any) -> ServerSettings:
    base: dict[str, Any] = {"host": "127.0.0.1", "port": 0, "log_level": "warning"}
    base.update(overrides)
    return ServerSettings(**base)


@asynccontextmanager
async def running_server(**overrides: Any) -> AsyncIterator[RunningServer]:
    server = await start_server(settings(**overrides), fake_factory)
    try:
        yield server
    finally:
        await server.stop()


class Peer:
    """A raw AIP client over the `websockets` library, with timeouts on every receive."""

    def __init__(self, conn: ClientConnection, client_id: str, client_type: ClientType) -> None:
        self.conn = conn
        self.client_id = client_id
        self.client_type = client_type

    async def send(self, type_: ClientMessageType, **fields: Any) -> None:
        fields.setdefault("client_id", self.client_id)
        fields.setdefault("client_type", self.client_type)
        message = ClientMessage(type=type_, **fields)
        await self.conn.send(message.model_dump_json(exclude_none=True))

    async def send_raw(self, frame: str | bytes) -> None:
        await self.conn.send(frame)

    async def recv(self, wait: float = TIMEOUT) -> ServerMessage:
        frame = await asyncio.wait_for(self.conn.recv(), wait)
        return parse_server_message(frame)

    async def recv_until(self, type_: ServerMessageType, wait: float = TIMEOUT) -> ServerMessage:
        """The next message of ``type_`` (others, e.g. acks, are skipped)."""
        async with asyncio.timeout(wait):
            while True:
                message = await self.recv(wait)
                if message.type == type_:
                    return message

    async def answer_command(self, command: ServerMessage) -> None:
        """Execute an echo COMMAND the way a device would and send COMMAND_RESULTS."""
        assert command.actions
        action = command.actions[0]
        result = Result(status=ResultStatus.SUCCESS, result=(action.parameters or {}).get("text"))
        await self.send(
            ClientMessageType.COMMAND_RESULTS,
            action_results=[result],
            prev_response_id=command.response_id,
            session_id=command.session_id,
            status=command.status,
        )


def ws_url(server: RunningServer, token: str | None = None) -> str:
    url = f"ws://127.0.0.1:{server.port}/ws"
    return f"{url}?token={token}" if token else url


@asynccontextmanager
async def peer(
    server: RunningServer,
    client_id: str,
    client_type: ClientType = ClientType.DEVICE,
    target_id: str | None = None,
    token: str | None = None,
    register: bool = True,
    metadata: dict[str, Any] | None = None,
) -> AsyncIterator[Peer]:
    """A connected client; registered (and its confirmation checked) unless register=False."""
    async with connect(ws_url(server, token), open_timeout=TIMEOUT, close_timeout=1) as conn:
        client = Peer(conn, client_id, client_type)
        if register:
            meta = metadata or {
                "platform": "linux",
                "system_info": {"os": "linux", "supported_features": ["shell"]},
            }
            await client.send(ClientMessageType.REGISTER, target_id=target_id, metadata=meta)
            confirmation = await client.recv()
            assert confirmation.type == ServerMessageType.HEARTBEAT, confirmation
            assert confirmation.status == TaskStatus.OK and confirmation.response_id
        yield client


def dumps(data: Any) -> str:
    return json.dumps(data)
