"""ServiceSessionFactory: the platform → session table, refusals and the sessions' model clients."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starweave.aip.messages import ServerMessage
from starweave.config import load_config
from starweave.errors import SessionError
from starweave.session.desktop_service import HostServiceSession
from starweave.session.mobile_service import MobileServiceSession
from starweave.session.service import SESSION_KINDS, LinuxServiceSession, ServiceSessionFactory, refusal


async def nowhere(message: ServerMessage) -> None:
    raise AssertionError("creating a session sends nothing")


def replay_factory(tmp_path: Path) -> ServiceSessionFactory:
    replay = tmp_path / "answers.jsonl"
    replay.write_text(json.dumps({"thought": "t"}) + "\n")
    block = {"API_TYPE": "replay", "REPLAY_FILE": str(replay)}
    config = load_config(env={}, overrides={"APP_AGENT": block, "HOST_AGENT": dict(block)})
    return ServiceSessionFactory(config)


@pytest.mark.parametrize(
    ("platform", "session_cls", "agent"),
    [
        ("linux", LinuxServiceSession, "LinuxAgent"),
        ("darwin", LinuxServiceSession, "LinuxAgent"),
        ("linux-desktop", HostServiceSession, "HostAgent"),
        ("windows", HostServiceSession, "HostAgent"),
        ("Linux-Desktop", HostServiceSession, "HostAgent"),
        ("mobile", MobileServiceSession, "MobileAgent"),
        ("android", MobileServiceSession, "MobileAgent"),
    ],
)
async def test_each_platform_gets_its_agents_session(
    tmp_path: Path, platform: str, session_cls: type, agent: str
) -> None:
    factory = replay_factory(tmp_path)
    try:
        session = factory(session_id="s", task_name="t", request="do it", send=nowhere, platform=platform)
        assert type(session) is session_cls
        # The first COMMAND addresses this agent's tool set on the device.
        assert session.dispatcher.agent_name == agent
        assert session.dispatcher.session_id == "s" and session.dispatcher.task_name == "t"
    finally:
        await factory.aclose()


async def test_a_host_session_and_its_app_agents_share_one_replay_stream(tmp_path: Path) -> None:
    factory = replay_factory(tmp_path)
    try:
        one = factory(session_id="a", task_name="a", request="x", send=nowhere, platform="linux-desktop")
        two = factory(session_id="b", task_name="b", request="x", send=nowhere, platform="linux-desktop")
        # Equal HOST_AGENT and APP_AGENT blocks: no second client (the answers are one stream) ...
        assert one.models.app_llm is None and two.models.app_llm is None
        # ... and every replay session replays the file from its start, with a client of its own.
        assert one.llm is not two.llm
    finally:
        await factory.aclose()


async def test_different_app_agent_model_gets_its_own_client(tmp_path: Path) -> None:
    replay = tmp_path / "answers.jsonl"
    replay.write_text("{}\n")
    other = tmp_path / "app.jsonl"
    other.write_text("{}\n")
    config = load_config(
        env={},
        overrides={
            "HOST_AGENT": {"API_TYPE": "replay", "REPLAY_FILE": str(replay)},
            "APP_AGENT": {"API_TYPE": "replay", "REPLAY_FILE": str(other)},
        },
    )
    factory = ServiceSessionFactory(config)
    try:
        session = factory(session_id="a", task_name="a", request="x", send=nowhere, platform="windows")
        assert session.models.app_llm is not None and session.models.app_llm is not session.llm
    finally:
        await factory.aclose()


@pytest.mark.parametrize(
    ("platform", "message"),
    [
        (
            "plan9",
            "device platform 'plan9' is not supported by this server yet; supported: linux, darwin, "
            "linux-desktop, windows, mobile",
        ),
        (
            "mobile",
            "device platform 'mobile' (Android phone over adb) is not available on this server yet: "
            "it needs the MobileAgent",
        ),
        ("android", "'android' (Android phone over adb) is not available"),
    ],
)
async def test_platforms_without_sessions_are_refused_with_one_line(
    tmp_path: Path, platform: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every known kind has sessions now: the phone's are removed to see a known kind refused.
    if platform != "plan9":
        monkeypatch.delitem(SESSION_KINDS, "mobile")
    factory = replay_factory(tmp_path)
    try:
        with pytest.raises(SessionError) as caught:
            factory(session_id="s", task_name="t", request="x", send=nowhere, platform=platform)
        assert message in str(caught.value) and "\n" not in str(caught.value)
    finally:
        await factory.aclose()
    assert refusal("windows") is None and refusal("linux-desktop") is None


async def test_an_empty_request_is_refused(tmp_path: Path) -> None:
    factory = replay_factory(tmp_path)
    try:
        with pytest.raises(SessionError, match="the task request is empty"):
            factory(session_id="s", task_name="t", request="  ", send=nowhere, platform="linux-desktop")
    finally:
        await factory.aclose()
