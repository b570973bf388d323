"""Issue 26 (findings 8 and 15): input the agent server cannot use is refused up front, clearly.

A real agent server on loopback, a real device client: a lone surrogate, a task name that is not
a string, a binary or deep-JSON frame each get a one-line answer, nothing is queued, no traceback
is logged, and the device takes the next task at once.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from integration.hostile_input_kit import Tracebacks
from integration.hostile_input_kit import tracebacks as tracebacks
from integration.server_fault_kit import WAIT, agent_server, device, dispatch, result_of
from unit.server.server_kit import Peer
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from starweave.aip.messages import ClientMessageType, ClientType, ServerMessageType, parse_server_message

# Raw bodies: a JSON encoder would refuse the lone surrogates, a client sending bytes does not.
BAD_DISPATCHES = [
    (b'{"client_id": "dev1", "request": "do \\ud800 it"}', "surrogate"),
    (b'{"client_id": "dev1", "request": "\\udcff"}', "surrogate"),
    (b'{"client_id": "dev\\udcff", "request": "w"}', "surrogate"),
    (b'{"client_id": "dev1", "request": "w", "task_name": 5}', "must be a string"),
    (b'{"client_id": "dev1", "request": "w", "task_name": 5.5}', "must be a string"),
    (b'{"client_id": "dev1", "request": "w", "task_name": ["a"]}', "must be a string"),
    (b'{"client_id": "dev1", "request": "w", "task_name": {"a": 1}}', "must be a string"),
    (b'{"client_id": "dev1", "request": "w", "task_name": true}', "must be a string"),
    (b'{"client_id": "dev1", "request": "w", "task_name": "t\\udcff"}', "Invalid task_name"),
    (b'{"client_id": "dev1", "request": "w", "task_name": "' + b"x" * 201 + b'"}', "Invalid task_name"),
]


async def test_unusable_dispatches_are_refused_and_nothing_is_queued(
    tmp_path: Path, tracebacks: Tracebacks
) -> None:
    async with (
        agent_server(tmp_path) as server,
        device(tmp_path, server, "dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http,
    ):
        tracebacks.attach()
        for body, why in BAD_DISPATCHES:
            answer = await http.post(
                "/api/dispatch", content=body, headers={"content-type": "application/json"}
            )
            # Before the fix a numeric name or a surrogate request was dispatched (200), then raised
            # in the dispatch path, and the device's queue stalled for 60 s.
            assert answer.status_code == 400, (body[:80], answer.text)
            detail = answer.json()["detail"]
            assert why in detail and "\n" not in detail, (body[:80], detail)
        ok = await dispatch(http, "dev1", "w", "after")
        assert ok.status_code == 200, ok.text
        assert ok.json()["queue_position"] == 0  # nothing was left waiting before it
        assert (await result_of(http, "after"))["task_status"] == "completed"
    assert tracebacks.seen == []


async def test_hostile_frames_get_a_clear_error_and_no_traceback(
    tmp_path: Path, tracebacks: Tracebacks
) -> None:
    async with (
        agent_server(tmp_path) as server,
        device(tmp_path, server, "dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http,
    ):
        tracebacks.attach()
        url = f"ws://127.0.0.1:{server.port}/ws"
        async with connect(url, max_size=None, open_timeout=WAIT) as conn:
            constellation = Peer(conn, "c1", ClientType.CONSTELLATION)
            await constellation.send(ClientMessageType.REGISTER, target_id="dev1")
            assert (await constellation.recv(WAIT)).type == ServerMessageType.HEARTBEAT
            task = {"type": "task", "client_id": "c1", "client_type": "constellation", "target_id": "dev1"}
            for frame, why in (
                (json.dumps({**task, "request": "x"})[:-1] + ', "request": "\\ud800"}', "Invalid JSON"),
                (json.dumps({**task, "request": "w", "task_name": 5}), "task_name"),
                ("[" * 100_000, "recursion limit"),
                (json.dumps({**task, "request": "w", "metadata": {}})[:-2] + "[" * 50_000, "Invalid JSON"),
                (b"\xff\xfe binary", "not UTF-8"),
            ):
                await conn.send(frame)
                error = parse_server_message(await conn.recv())
                assert error.type == ServerMessageType.ERROR and why in (error.error or ""), (why, error)
        async with connect(url, open_timeout=WAIT) as conn:
            await conn.send(b"\xff\xfe", text=True)  # a text frame that is not UTF-8
            with pytest.raises(ConnectionClosed) as closed:
                await conn.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
        ok = await dispatch(http, "dev1", "w", "ok")
        assert ok.status_code == 200 and ok.json()["queue_position"] == 0
        assert (await result_of(http, "ok"))["task_status"] == "completed"
    assert tracebacks.seen == []
