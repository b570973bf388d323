"""Dispatches to a busy device wait in its queue, and every one of them ends: result or clear refusal."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from unit.server.server_kit import TIMEOUT, Peer, peer, running_server

from starweave.aip.messages import ClientMessageType, ServerMessage, ServerMessageType, TaskStatus, new_id


async def _dispatch(http: httpx.AsyncClient, request: str, task_name: str, client_id: str = "dev1") -> Any:
    return await http.post(
        "/api/dispatch", json={"client_id": client_id, "request": request, "task_name": task_name}
    )


async def _run(dev: Peer, task: ServerMessage) -> ServerMessage:
    """Echo the TASK, answer its COMMAND, return the TASK_END (what a device does)."""
    await dev.send(
        ClientMessageType.TASK,
        request=task.user_request,
        task_name=task.task_name,
        session_id=task.session_id,
    )
    await dev.answer_command(await dev.recv_until(ServerMessageType.COMMAND))
    return await dev.recv_until(ServerMessageType.TASK_END)


async def _done(http: httpx.AsyncClient, task_name: str) -> dict[str, Any]:
    """The task's result once it is done (polled, with a generous deadline)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            body: dict[str, Any] = (await http.get(f"/api/task_result/{task_name}")).json()
            if body.get("status") == "done":
                return body
            await asyncio.sleep(0.02)


async def test_tasks_for_a_busy_device_wait_and_run_one_after_another() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        answers = [(await _dispatch(http, f"r{i}", f"q{i}")).json() for i in range(3)]
        assert [a["queue_position"] for a in answers] == [0, 1, 2]
        assert all(a["status"] == "dispatched" for a in answers)
        assert server.app.state.dispatch_queue.queued("dev1") == 2
        for i in range(3):
            assert (await http.get(f"/api/task_result/q{i}")).json() == {"status": "pending"}
        for i in range(3):
            task = await dev.recv_until(ServerMessageType.TASK)
            assert task.task_name == f"q{i}"  # FIFO, and only after the previous TASK_END
            end = await _run(dev, task)
            assert end.status == TaskStatus.COMPLETED and end.session_id == task.session_id
            assert (await _done(http, f"q{i}"))["result"] == {"echo": f"r{i}"}


async def test_a_full_queue_answers_429_with_the_reason() -> None:
    async with (
        running_server(max_queued_tasks=2) as server,
        peer(server, "dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        codes = [(await _dispatch(http, "r", f"f{i}")).status_code for i in range(3)]
        assert codes == [200, 200, 200]
        refused = await _dispatch(http, "r", "f3")
        assert refused.status_code == 429
        assert refused.json() == {
            "detail": "Device 'dev1' is busy and 2 task(s) already wait for it (the limit is 2); "
            "retry after one of them finishes"
        }
        # The refused name was not kept: it is unknown, and may be used again later.
        assert (await http.get("/api/task_result/f3")).status_code == 404


async def test_queued_tasks_fail_with_the_reason_when_the_device_disconnects() -> None:
    async with (
        running_server() as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        async with peer(server, "dev1") as dev:
            for i in range(3):
                await _dispatch(http, "r", f"d{i}")
            await dev.recv_until(ServerMessageType.TASK)  # d0 sent, never echoed
        for i in range(3):
            body = await _done(http, f"d{i}")
            assert body["task_status"] == "failed"
            assert body["error"] == "Device 'dev1' disconnected before the task started"


async def test_a_task_the_device_never_starts_fails_and_frees_the_queue() -> None:
    async with (
        running_server(dispatch_start_timeout=0.5) as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        await _dispatch(http, "ignored", "lost")
        await _dispatch(http, "next", "after")
        ignored = await dev.recv_until(ServerMessageType.TASK)
        assert ignored.task_name == "lost"
        # The device does not echo it (a wedged or busy device): it ends, and the device is told.
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.session_id == ignored.session_id and end.status == TaskStatus.FAILED
        assert "did not start the task within 0.5s" in (end.error or "")
        body = await _done(http, "lost")
        assert body["task_status"] == "failed" and "did not start the task" in body["error"]
        nxt = await dev.recv_until(ServerMessageType.TASK)
        assert nxt.task_name == "after"
        assert (await _run(dev, nxt)).status == TaskStatus.COMPLETED
        # A late echo of the expired task is refused, not run.
        await dev.send(ClientMessageType.TASK, request="ignored", task_name="lost", session_id=new_id())
        assert "already in use" in ((await dev.recv_until(ServerMessageType.ERROR)).error or "")


async def test_a_device_error_about_the_sent_task_ends_it_at_once() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        await _dispatch(http, "huge", "refused-by-device")
        await _dispatch(http, "fine", "second")
        task = await dev.recv_until(ServerMessageType.TASK)
        await dev.send(ClientMessageType.ERROR, error="task too large to start", session_id=task.session_id)
        body = await _done(http, "refused-by-device")
        assert body["error"] == "Device 'dev1' did not start the task: task too large to start"
        assert (await dev.recv_until(ServerMessageType.TASK)).task_name == "second"


async def test_a_session_from_elsewhere_makes_the_device_busy_too() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=TIMEOUT) as http,
    ):
        own = new_id()
        await dev.send(ClientMessageType.TASK, request="own work", task_name="own", session_id=own)
        command = await dev.recv_until(ServerMessageType.COMMAND)
        assert (await _dispatch(http, "r", "waits")).json()["queue_position"] == 1
        await dev.answer_command(command)
        assert (await dev.recv_until(ServerMessageType.TASK_END)).session_id == own
        assert (await dev.recv_until(ServerMessageType.TASK)).task_name == "waits"
