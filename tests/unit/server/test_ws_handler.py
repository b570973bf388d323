"""The /ws endpoint against a real uvicorn on port 0 with raw `websockets` clients."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import pytest
from unit.server.server_kit import FakeSession, peer, running_server
from websockets.exceptions import ConnectionClosed

from starweave.aip.messages import ClientMessageType, ClientType, ServerMessageType, TaskStatus, new_id


async def _closed_with(conn, wait: float = 30.0) -> tuple[int | None, str]:  # type: ignore[no-untyped-def]
    """Drain until the server closes; returns (code, reason)."""
    with pytest.raises(ConnectionClosed) as info:
        async with asyncio.timeout(wait):
            while True:
                await conn.recv()
    rcvd = info.value.rcvd
    return (rcvd.code, rcvd.reason) if rcvd else (None, "")


async def _until(check: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Poll ``check`` until it holds; generous ``limit``: only a failing test waits that long."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def test_registration_is_confirmed_and_heartbeat_acked() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        await dev.send(ClientMessageType.HEARTBEAT)
        ack = await dev.recv()
        assert ack.type == ServerMessageType.HEARTBEAT and ack.status == TaskStatus.OK and ack.response_id
        assert server.app.state.registry.is_device_connected("dev1")


async def test_first_frame_must_be_register() -> None:
    async with running_server() as server, peer(server, "dev1", register=False) as dev:
        await dev.send(ClientMessageType.HEARTBEAT)
        error = await dev.recv()
        assert error.type == ServerMessageType.ERROR
        assert error.error == "First message must be a registration message"
        code, _ = await _closed_with(dev.conn)
        assert code == 1008


async def test_duplicate_client_id_is_rejected_and_first_connection_untouched() -> None:
    async with running_server() as server, peer(server, "dev1") as first:
        async with peer(server, "dev1", register=False) as second:
            await second.send(ClientMessageType.REGISTER, metadata={"platform": "linux"})
            error = await second.recv()
            assert error.type == ServerMessageType.ERROR
            assert error.error == "Client ID 'dev1' is already connected"
            code, _ = await _closed_with(second.conn)
            assert code == 1008
        await first.send(ClientMessageType.HEARTBEAT)
        assert (await first.recv()).type == ServerMessageType.HEARTBEAT
        assert server.app.state.registry.list_clients() == ["dev1"]


async def test_constellation_target_must_be_a_connected_device() -> None:
    # "c1" is online but is a constellation, not a device.
    async with (
        running_server() as server,
        peer(server, "c1", ClientType.CONSTELLATION),
        peer(server, "c2", ClientType.CONSTELLATION, register=False) as c2,
    ):
        await c2.send(ClientMessageType.REGISTER, target_id="c1")
        error = await c2.recv()
        assert error.error == "Target device 'c1' is not connected"
        code, _ = await _closed_with(c2.conn)
        assert code == 1008


async def test_malformed_frames_get_errors_and_connection_survives() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        for frame in ("not json", '{"type": "nope"}', b"\xff\xfe", '{"type": "task"}', "x" * 2_000_000):
            await dev.send_raw(frame)
            error = await dev.recv()
            assert error.type == ServerMessageType.ERROR and error.error
        await dev.send(ClientMessageType.HEARTBEAT, client_id="someone-else")
        assert "does not match" in str((await dev.recv()).error)
        await dev.send(ClientMessageType.HEARTBEAT)
        assert (await dev.recv()).type == ServerMessageType.HEARTBEAT


async def test_too_many_bad_frames_in_a_row_close_the_connection() -> None:
    async with running_server(max_bad_frames=5) as server, peer(server, "dev1") as dev:
        for _ in range(5):
            await dev.send_raw("garbage")
        code, reason = await _closed_with(dev.conn)
        assert code == 1008 and "Too many invalid messages" in reason
        # The server's cleanup follows the close.
        await _until(lambda: not server.app.state.registry.is_online("dev1"), "dev1 offline")


async def test_device_self_task_runs_command_round_trip_and_stores_result() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        await dev.send(ClientMessageType.TASK, request="hello", task_name="t1", session_id="s1")
        command = await dev.recv_until(ServerMessageType.COMMAND)
        assert command.session_id == "s1" and command.actions and command.actions[0].tool_name == "echo"
        await dev.answer_command(command)
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.status == TaskStatus.COMPLETED and end.result == {"echo": "hello"}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
            body = (await http.get("/api/task_result/t1")).json()
        assert body["status"] == "done" and body["result"] == {"echo": "hello"}
        assert body["task_status"] == "completed"


async def test_failing_session_reports_failure_result() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        await dev.send(ClientMessageType.TASK, request="fail", task_name="t-fail")
        await dev.answer_command(await dev.recv_until(ServerMessageType.COMMAND))
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.status == TaskStatus.FAILED and end.result == {"failure": "session ended with an error"}


async def test_command_results_for_unknown_session_get_an_error() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        await dev.send(
            ClientMessageType.COMMAND_RESULTS, action_results=[], prev_response_id=new_id(), session_id="nope"
        )
        error = await dev.recv()
        assert error.type == ServerMessageType.ERROR and "Unknown session 'nope'" in str(error.error)


async def test_device_disconnect_mid_task_fails_the_constellation_task() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        peer(server, "c1", ClientType.CONSTELLATION, target_id="dev1") as c1,
    ):
        await c1.send(ClientMessageType.TASK, request="hello", task_name="ct", target_id="dev1")
        ack = await c1.recv_until(ServerMessageType.HEARTBEAT)
        assert ack.session_id
        command = await dev.recv_until(ServerMessageType.COMMAND)
        assert command.session_id == ack.session_id
        await dev.conn.close()
        end = await c1.recv_until(ServerMessageType.TASK_END)
        assert end.status == TaskStatus.FAILED and "Device disconnected" in str(end.error)
        assert FakeSession.created[-1].cancelled
        assert server.app.state.sessions.get_result_by_task("ct") == {}


async def test_constellation_disconnect_cancels_without_task_end() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        async with peer(server, "c1", ClientType.CONSTELLATION, target_id="dev1") as c1:
            await c1.send(ClientMessageType.TASK, request="hello", task_name="ct2", target_id="dev1")
            await dev.recv_until(ServerMessageType.COMMAND)
        session = FakeSession.created[-1]
        await _until(lambda: session.cancelled, "the session cancelled")
        await dev.send(ClientMessageType.HEARTBEAT)
        assert (await dev.recv()).type == ServerMessageType.HEARTBEAT  # no TASK_END came before it


async def test_device_info_request_is_answered_from_the_registry() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as _,
        peer(server, "c1", ClientType.CONSTELLATION, target_id="dev1") as c1,
    ):
        await c1.send(ClientMessageType.DEVICE_INFO_REQUEST, request_id="r1", target_id="dev1")
        reply = await c1.recv_until(ServerMessageType.DEVICE_INFO_RESPONSE)
        assert reply.request_id == "r1" and reply.status == TaskStatus.OK
        assert reply.result == {
            "device_id": "dev1",
            "platform": "linux",
            "os": "linux",
            "supported_features": ["shell"],
        }
        await c1.send(ClientMessageType.DEVICE_INFO_REQUEST, request_id="r2", target_id="other")
        assert "registered for device 'dev1' only" in str((await c1.recv()).error)
