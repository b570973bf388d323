"""SessionManager: background runs, status rules, callbacks, cancellation, capacity."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from starweave.aip.messages import ClientMessage, ServerMessage, TaskStatus
from starweave.errors import CapacityError
from starweave.server.sessions import SessionManager


class ScriptedSession:
    """A session whose outcome the test chooses; ``gate`` holds run() until the test opens it."""

    def __init__(self, session_id: str, outcome: str, results: dict[str, Any]) -> None:
        self.id = session_id
        self.results = results
        self.outcome = outcome
        self.gate = asyncio.Event()

    async def run(self) -> None:
        await self.gate.wait()
        if self.outcome == "raise":
            raise RuntimeError("boom")

    def is_error(self) -> bool:
        return self.outcome == "error"

    def is_finished(self) -> bool:
        return self.outcome == "finished"

    async def set_result(self, response_id: str, message: ClientMessage) -> None:
        return None


async def _send(_: ServerMessage) -> None:
    return None


def _manager(outcome: str = "finished", results: dict[str, Any] | None = None, **kw: Any) -> SessionManager:
    def factory(**kwargs: Any) -> ScriptedSession:
        return ScriptedSession(kwargs["session_id"], outcome, dict(results or {}))

    return SessionManager(factory, platform="linux", **kw)


async def _run(manager: SessionManager, callback: Any = None) -> ServerMessage:
    await manager.execute_task_async("s1", "t1", "req", _send, callback=callback)
    session = manager.get_session("s1")
    assert isinstance(session, ScriptedSession)
    session.gate.set()
    deadline = time.monotonic() + 30.0  # generous: only a failing test waits this long
    while (end := manager.get_task_end_by_task("t1")) is None:
        assert time.monotonic() < deadline, "session did not finish"
        await asyncio.sleep(0.01)
    return end


@pytest.mark.parametrize(
    ("outcome", "results", "status", "error", "stored"),
    [
        ("finished", {"a": 1}, TaskStatus.COMPLETED, None, {"a": 1}),
        # A failed session's TASK_END names why: the recorded error, else the agent's last answer.
        (
            "error",
            {},
            TaskStatus.FAILED,
            "session ended with an error",
            {"failure": "session ended with an error"},
        ),
        (
            "error",
            {"why": "x"},
            TaskStatus.FAILED,
            "the device agent ended with status FAIL without giving a reason",
            {"why": "x"},
        ),
        (
            "error",
            {"status": "FAIL", "result": "hello.txt is not in this workspace", "error": ""},
            TaskStatus.FAILED,
            "the device agent ended with status FAIL: hello.txt is not in this workspace",
            {"status": "FAIL", "result": "hello.txt is not in this workspace", "error": ""},
        ),
        (
            "error",
            {"status": "FAIL", "result": "Failed: x", "error": "Stopped after 20 steps"},
            TaskStatus.FAILED,
            "Stopped after 20 steps",
            {"status": "FAIL", "result": "Failed: x", "error": "Stopped after 20 steps"},
        ),
        ("limbo", {}, TaskStatus.FAILED, "Session ended in unknown state", {}),
        ("raise", {}, TaskStatus.FAILED, "boom", {}),
    ],
)
async def test_status_rules(
    outcome: str, results: dict, status: TaskStatus, error: str | None, stored: dict
) -> None:
    manager = _manager(outcome, results)
    end = await _run(manager)
    assert (end.status, end.error, end.result) == (status, error, stored)
    assert manager.get_result_by_task("t1") == stored
    assert manager.get_session("s1") is None  # the live session is dropped, results stay


async def test_returns_at_once_and_lookups_never_block() -> None:
    manager = _manager()
    session_id = await asyncio.wait_for(manager.execute_task_async("s1", "t1", "r", _send), 0.5)
    assert session_id == "s1" and manager.is_running("s1")
    assert manager.get_result_by_task("t1") is None and manager.get_result("s1") is None
    assert manager.session_id_dict == {"t1": "s1"}


async def test_results_stored_before_callback_and_callback_errors_swallowed() -> None:
    manager = _manager(results={"k": "v"})
    seen: list[Any] = []

    async def callback(session_id: str, message: ServerMessage) -> None:
        seen.append(manager.get_result(session_id))
        raise ConnectionError("requester gone")

    end = await _run(manager, callback)
    assert seen == [{"k": "v"}] and end.status == TaskStatus.COMPLETED
    assert not manager.is_running("s1")


@pytest.mark.parametrize(("reason", "calls"), [("device_disconnected", 1), ("constellation_disconnected", 0)])
async def test_cancel_reasons_and_idempotence(reason: str, calls: int) -> None:
    manager = _manager()
    received: list[ServerMessage] = []

    async def callback(_: str, message: ServerMessage) -> None:
        received.append(message)

    await manager.execute_task_async("s1", "t1", "r", _send, callback=callback)
    await asyncio.sleep(0)
    first, second = await asyncio.gather(manager.cancel_task("s1", reason), manager.cancel_task("s1", reason))
    assert (first, second) == (True, False)
    assert await manager.cancel_task("s1", reason) is False
    assert len(received) == calls
    if calls:
        assert received[0].status == TaskStatus.FAILED and "Device disconnected" in str(received[0].error)
    assert manager.get_result_by_task("t1") == {} and manager.get_session("s1") is None


async def test_capacity_limit() -> None:
    manager = _manager(max_sessions=1)
    await manager.execute_task_async("s1", "t1", "r", _send)
    with pytest.raises(CapacityError, match="Server at capacity"):
        await manager.execute_task_async("s2", "t2", "r", _send)
    await manager.shutdown()
    assert not manager.is_running("s1")
