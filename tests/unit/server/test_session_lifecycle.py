"""SessionManager housekeeping: TTL pruning, task-name claims, refusals, end hook, concurrent shutdown."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from unit.server.server_kit import peer, running_server

from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
)
from starweave.errors import SessionError, TaskNameInUse
from starweave.server.sessions import SessionManager


class QuickSession:
    """Finishes at once; with ``stubborn`` it ignores cancellation for ``stubborn`` seconds."""

    def __init__(self, session_id: str, request: str) -> None:
        self.id = session_id
        self.results: dict[str, Any] = {"done": request}
        self.request = request

    async def run(self) -> None:
        if self.request.startswith("stubborn"):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await asyncio.sleep(float(self.request.split(":")[1]))
                raise

    def is_error(self) -> bool:
        return False

    def is_finished(self) -> bool:
        return True

    async def set_result(self, response_id: str, message: ClientMessage) -> None:
        return None


def _factory(**kwargs: Any) -> QuickSession:
    if kwargs["request"] == "bug":
        raise ValueError("factory bug")
    return QuickSession(kwargs["session_id"], kwargs["request"])


async def _send(_: ServerMessage) -> None:
    return None


async def _finish(manager: SessionManager, task_name: str) -> None:
    deadline = time.monotonic() + 30.0  # generous: only a failing test waits this long
    while manager.get_task_end_by_task(task_name) is None:
        assert time.monotonic() < deadline, f"{task_name} did not finish"
        await asyncio.sleep(0.005)


async def test_prune_forgets_old_results_refusals_and_reservations() -> None:
    ended: list[str] = []
    # A TTL no loaded machine can outlast between the run and the first prune.
    manager = SessionManager(_factory, platform="linux", result_ttl=600.0, on_end=ended.append)
    await manager.execute_task_async("s1", "t1", "req", _send)
    await _finish(manager, "t1")
    assert ended == ["s1"]
    manager.record_refusal("t2", "s2", "refused")
    manager.reserve_task_name("t3", "dev1")
    assert manager.prune() == 0  # too young
    assert manager.prune(time.monotonic() + 601.0) == 3
    assert manager.results == {} and manager.task_ends == {} and manager.session_id_dict == {}
    assert manager.refused == {} and len(manager.names) == 0
    for name in ("t1", "t2", "t3"):
        assert not manager.task_name_in_use(name) and manager.get_task_end_by_task(name) is None


async def test_task_name_claims() -> None:
    manager = SessionManager(_factory, platform="linux")
    manager.reserve_task_name("job", "dev1")
    with pytest.raises(TaskNameInUse, match="already in use"):
        manager.reserve_task_name("job", "dev2")
    with pytest.raises(TaskNameInUse, match="dispatched to another client"):
        await manager.execute_task_async("s1", "job", "req", _send, claimant="dev2")
    await manager.execute_task_async("s1", "job", "req", _send, claimant="dev1")
    assert "job" not in manager.names  # the session owns it now
    await _finish(manager, "job")
    with pytest.raises(TaskNameInUse, match="already in use"):
        await manager.execute_task_async("s2", "job", "req", _send, claimant="dev1")
    with pytest.raises(SessionError, match="Session 's1' is already in use"):
        await manager.execute_task_async("s1", "fresh", "req", _send)


async def test_factory_bug_becomes_a_session_error() -> None:
    manager = SessionManager(_factory, platform="linux")
    with pytest.raises(SessionError, match="Could not create a session for task 't': factory bug"):
        await manager.execute_task_async("s1", "t", "bug", _send)
    assert manager.sessions == {} and not manager.task_name_in_use("t")


async def test_shutdown_cancels_sessions_concurrently() -> None:
    # Each session, once cancelled, holds on until all three are cancelled: cancelled one at a time,
    # the first would hold on for its whole grace period, so shutdown would take at least that long.
    grace = 30.0
    waiting = 0
    all_waiting, all_cancelled = asyncio.Event(), asyncio.Event()
    cancelled = 0

    class HoldingSession(QuickSession):
        async def run(self) -> None:
            nonlocal waiting, cancelled
            try:
                waiting += 1
                if waiting == 3:
                    all_waiting.set()
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled += 1
                if cancelled == 3:
                    all_cancelled.set()
                await all_cancelled.wait()
                raise

    def factory(**kwargs: Any) -> QuickSession:
        return HoldingSession(kwargs["session_id"], kwargs["request"])

    manager = SessionManager(factory, platform="linux", cancel_grace=grace)
    for i in range(3):
        await manager.execute_task_async(f"s{i}", f"t{i}", "hold", _send)
    await asyncio.wait_for(all_waiting.wait(), 30.0)  # all three run (a cancel would find them)
    started = time.monotonic()
    await manager.shutdown()
    assert all_cancelled.is_set()
    assert time.monotonic() - started < grace  # no session waited out its grace period
    assert manager.active_count == 0


async def test_app_prunes_results_and_registry_lists_periodically() -> None:
    async with (
        # The TTL outlasts any stall of a loaded machine between TASK_END and the first look.
        running_server(result_ttl=5.0, cleanup_interval=0.05) as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        await dev.send(ClientMessageType.TASK, request="hi", task_name="short-lived", session_id="sid-1")
        await dev.answer_command(await dev.recv_until(ServerMessageType.COMMAND))
        assert (await dev.recv_until(ServerMessageType.TASK_END)).status == TaskStatus.COMPLETED
        assert (await http.get("/api/task_result/short-lived")).json()["status"] == "done"
        assert server.app.state.registry.get_device_sessions("dev1") == []  # removed when it ended
        deadline = time.monotonic() + 30.0  # generous: only a failing test waits this long
        while (await http.get("/api/task_result/short-lived")).status_code != 404:  # until forgotten
            assert time.monotonic() < deadline, "the result was never pruned"
            await asyncio.sleep(0.05)
        assert server.app.state.sessions.session_id_dict == {}
