"""Tasks the server refuses after the TASK echo (B1) and task-name ownership (B3)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from unit.server.server_kit import FakeSession, Peer, peer, running_server

from starweave.aip.messages import ClientMessageType, ServerMessage, ServerMessageType, TaskStatus, new_id


async def _dispatch(http: httpx.AsyncClient, client_id: str, request: str, task_name: str) -> httpx.Response:
    return await http.post(
        "/api/dispatch", json={"client_id": client_id, "request": request, "task_name": task_name}
    )


async def _echo(dev: Peer, task: ServerMessage, **overrides: Any) -> None:
    fields: dict[str, Any] = {
        "request": task.user_request,
        "task_name": task.task_name,
        "session_id": task.session_id,
        "metadata": {"platform": "linux"},
    }
    fields.update(overrides)
    await dev.send(ClientMessageType.TASK, **fields)


async def _result(http: httpx.AsyncClient, task_name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30.0  # generous: only a failing test waits this long
    while True:
        body: dict[str, Any] = (await http.get(f"/api/task_result/{task_name}")).json()
        if body["status"] == "done":
            return body
        assert time.monotonic() < deadline, f"no result for {task_name}"
        await asyncio.sleep(0.02)


async def test_factory_refusal_stores_failed_result_and_ends_the_device_task() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        assert (await _dispatch(http, "dev1", "refuse", "job-r")).status_code == 200
        task = await dev.recv_until(ServerMessageType.TASK)
        await _echo(dev, task)
        error = await dev.recv_until(ServerMessageType.ERROR)
        assert error.session_id == task.session_id and "refused by the factory" in (error.error or "")
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.session_id == task.session_id and end.status == TaskStatus.FAILED
        body = await _result(http, "job-r")
        assert body["task_status"] == "failed" and "refused by the factory" in body["error"]
        assert body["session_id"] == task.session_id


async def test_capacity_refusal_is_reported_not_left_pending() -> None:
    async with (
        running_server(max_sessions=1) as server,
        peer(server, "dev1") as dev,
        peer(server, "other") as other,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        # The server's only session slot is taken on another device (dev1 itself would be busy,
        # and the dispatch would wait in its queue instead).
        await other.send(ClientMessageType.TASK, request="hang", task_name="busy", session_id=new_id())
        await other.recv_until(ServerMessageType.HEARTBEAT)  # the session runs
        await _dispatch(http, "dev1", "hi", "job-2")
        task = await dev.recv_until(ServerMessageType.TASK)
        await _echo(dev, task)
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.session_id == task.session_id and end.status == TaskStatus.FAILED
        assert "capacity" in (await _result(http, "job-2"))["error"]


async def test_session_id_in_use_is_refused_without_ending_the_running_session() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        sid = new_id()
        await dev.send(ClientMessageType.TASK, request="hi", task_name="first", session_id=sid)
        command = await dev.recv_until(ServerMessageType.COMMAND)
        await dev.send(ClientMessageType.TASK, request="hi", task_name="second", session_id=sid)
        error = await dev.recv_until(ServerMessageType.ERROR)
        assert error.session_id == sid and "already in use" in (error.error or "")
        assert (await _result(http, "second"))["task_status"] == "failed"
        # The running session is untouched: it still completes, with its own TASK_END first.
        await dev.answer_command(command)
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.session_id == sid and end.status == TaskStatus.COMPLETED
        assert (await _result(http, "first"))["task_status"] == "completed"


async def test_dispatched_name_is_only_for_its_device() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev1,
        peer(server, "dev2") as dev2,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        await _dispatch(http, "dev1", "hi", "job-x")
        task = await dev1.recv_until(ServerMessageType.TASK)
        await dev2.send(ClientMessageType.TASK, request="steal", task_name="job-x", session_id=new_id())
        error = await dev2.recv_until(ServerMessageType.ERROR)
        assert "dispatched to another client" in (error.error or "")
        assert (await http.get("/api/task_result/job-x")).json() == {"status": "pending"}
        await _echo(dev1, task)
        await dev1.answer_command(await dev1.recv_until(ServerMessageType.COMMAND))
        assert (await dev1.recv_until(ServerMessageType.TASK_END)).status == TaskStatus.COMPLETED
        # The name now belongs to a stored task: neither the API nor a device may reuse it.
        again = await _dispatch(http, "dev1", "hi", "job-x")
        assert again.status_code == 409 and again.json() == {"detail": "Task name 'job-x' is already in use"}
        await dev1.send(ClientMessageType.TASK, request="hi", task_name="job-x", session_id=new_id())
        assert "already in use" in ((await dev1.recv_until(ServerMessageType.ERROR)).error or "")
        assert (await _result(http, "job-x"))["result"] == {"echo": "hi"}
        assert [s.task_name for s in FakeSession.created].count("job-x") == 1


async def test_dispatch_reserves_the_name_until_it_is_used() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        assert (await _dispatch(http, "dev1", "hi", "job-y")).status_code == 200
        second = await _dispatch(http, "dev1", "other", "job-y")
        assert second.status_code == 409
        assert second.json() == {"detail": "Task name 'job-y' is already in use"}
        assert (await dev.recv_until(ServerMessageType.TASK)).user_request == "hi"
