"""Service sessions run unattended: a dangerous action is refused (unless the server runs with
``--yes``) without the server's stdin or terminal being touched, the refusal says why, a crashed
session still leaves its result.json, and a replay session's model client ends with it."""

from __future__ import annotations

import asyncio
import builtins
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.linux_replay import answer
from helpers.service_device import InProcessDevice

from starweave.aip.messages import ServerMessage
from starweave.config import StarweaveConfig, load_config
from starweave.errors import ConfigError
from starweave.llm.providers.replay import ReplayClient
from starweave.session import desktop_service, mobile_service, service
from starweave.session.service import SESSION_KINDS, ServiceSessionFactory
from starweave.session.service_base import DeviceServiceSession


class AnsweringStdin:
    """A terminal on stdin that would answer "y"; every touch is recorded (none may happen)."""

    def __init__(self, touched: list[str]) -> None:
        self.touched = touched

    def isatty(self) -> bool:
        self.touched.append("isatty")
        return True

    def readline(self, *args: Any) -> str:
        self.touched.append("readline")
        return "y\n"

    def fileno(self) -> int:
        self.touched.append("fileno")
        raise OSError("not a real stdin")


@pytest.fixture
def touched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What touched stdin or prompted (``input``) during the test."""
    seen: list[str] = []
    monkeypatch.setattr(sys, "stdin", AnsweringStdin(seen))

    def typed(prompt: object = "") -> str:
        seen.append("input")
        return "y"

    monkeypatch.setattr(builtins, "input", typed)
    return seen


def shell_config(tmp_path: Path, answers: list[dict[str, Any]]) -> StarweaveConfig:
    replay = tmp_path / "answers.jsonl"
    replay.write_text("".join(json.dumps(a) + "\n" for a in answers))
    return load_config(
        env={},
        overrides={
            "APP_AGENT": {"API_TYPE": "replay", "REPLAY_FILE": str(replay)},
            "system": {"LOG_DIR": str(tmp_path / "logs"), "SHELL": {"WORKSPACE": str(tmp_path / "device")}},
        },
    )


async def run_on_device(
    config: StarweaveConfig, auto_approve: bool, task: str
) -> tuple[DeviceServiceSession, ServiceSessionFactory]:
    device = InProcessDevice(config)
    factory = ServiceSessionFactory(config, auto_approve=auto_approve)
    session = factory(session_id=task, task_name=task, request="remove victim.txt", send=device)
    device.session = session
    try:
        await asyncio.wait_for(session.run(), 60)
    finally:
        await device.aclose()
    return session, factory


@pytest.mark.parametrize("auto_approve", [False, True])
async def test_a_dangerous_command_is_refused_unless_yes_and_stdin_is_never_read(
    tmp_path: Path, touched: list[str], auto_approve: bool
) -> None:
    victim = tmp_path / "device" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("keep me\n")
    config = shell_config(tmp_path, [answer("rm victim.txt"), answer(None, "FINISH", result="removed")])
    session, factory = await run_on_device(config, auto_approve, "rm")
    await factory.aclose()
    saved = json.loads((tmp_path / "logs" / "rm" / "result.json").read_text())
    assert touched == []  # a terminal answering "y" was there, and nobody asked it
    if auto_approve:
        assert session.results["status"] == "FINISH" and not victim.exists()
        assert saved["error"] == ""
        return
    assert session.results["status"] == "FAIL" and victim.read_text() == "keep me\n"
    assert saved["error"] == (
        "not allowed: rm victim.txt (the agent server runs unattended; start it with --yes to allow"
        " such actions)"
    )
    assert session.view.refused == ["rm victim.txt"]


BUILDERS = {
    service.LinuxServiceSession: (service, "make_linux_agent"),
    desktop_service.HostServiceSession: (desktop_service, "make_host_agent"),
    mobile_service.MobileServiceSession: (mobile_service, "make_mobile_agent"),
}


async def nowhere(message: ServerMessage) -> None:
    raise AssertionError("nothing is sent")


@pytest.mark.parametrize("platform", list(SESSION_KINDS))
async def test_every_session_kind_confirms_without_asking_and_a_config_error_is_its_result(
    tmp_path: Path, touched: list[str], monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    session_cls = SESSION_KINDS[platform]
    module, builder = BUILDERS[session_cls]
    views: list[Any] = []

    def broken_builder(*args: Any) -> Any:
        views.extend(a for a in args if hasattr(a, "confirm"))
        raise ConfigError("the agent's prompt file is missing")

    async def no_tools(self: Any) -> list[dict[str, Any]]:
        return []

    monkeypatch.setattr(module, builder, broken_builder)
    monkeypatch.setattr(service.LinuxServiceSession, "device_tools", no_tools)
    config = shell_config(tmp_path, [answer(None, "FINISH")])
    factory = ServiceSessionFactory(config)
    session = factory(session_id="s", task_name="crash", request="x", send=nowhere, platform=platform)
    await session.run()
    await factory.aclose()
    assert session.is_finished() and session.is_error()
    saved = json.loads((tmp_path / "logs" / "crash" / "result.json").read_text())
    assert saved == {
        "task": "crash",
        "request": "x",
        "status": "FAIL",
        "error": "the agent's prompt file is missing",
    }
    # The view the agent got refuses a CONFIRM at once, from a worker thread as the agents ask.
    (view,) = views
    assert await asyncio.to_thread(view.confirm, "delete everything", "deletes") is False
    assert touched == [] and not view.can_ask()


async def test_an_unexpected_error_still_writes_result_json_then_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crash(self: Any, logs: Any, started: float) -> dict[str, Any]:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(service.LinuxServiceSession, "play", crash)
    factory = ServiceSessionFactory(shell_config(tmp_path, [answer(None, "FINISH")]))
    session = factory(session_id="s", task_name="bug", request="x", send=nowhere)
    with pytest.raises(RuntimeError, match="boom"):
        await session.run()
    await factory.aclose()
    saved = json.loads((tmp_path / "logs" / "bug" / "result.json").read_text())
    assert saved["status"] == "FAIL"
    assert saved["error"] == "the session stopped: RuntimeError: boom second line"
    assert session.is_finished() and session.is_error()


async def test_a_replay_sessions_client_is_closed_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[ReplayClient] = []
    original = ReplayClient.aclose

    async def recording_aclose(self: ReplayClient) -> None:
        closed.append(self)
        await original(self)

    monkeypatch.setattr(ReplayClient, "aclose", recording_aclose)
    (tmp_path / "device").mkdir()
    config = shell_config(tmp_path, [answer(None, "FINISH", result="nothing to do")])
    session, factory = await run_on_device(config, False, "done")
    assert session.results["status"] == "FINISH"
    # The factory keeps no client of a replay session, and the session's own was closed.
    assert factory.clients == ()
    assert closed == [session.llm]
    await factory.aclose()
    assert closed == [session.llm]
