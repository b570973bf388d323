"""MobileServerState: the spec's TTLs on an injected clock, and invalidation after actions."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from mcp import Client

from starweave.tools.mobile import Adb
from starweave.tools.servers.mobile import (
    MobileRegistry,
    MobileServerState,
    create_data_collector_server,
    device_adb,
    mobile_state,
)
from starweave.tools.servers.mobile import collector as collector_module
from starweave.tools.servers.mobile import state as state_module
from starweave.tools.servers.mobile.state import ENV_ADB_PATH, ENV_ADB_SERIAL


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_controls_and_tree_live_five_seconds(android_phone: SimulatedPhone) -> None:
    clock = Clock()
    state = MobileServerState(android_phone.adb_client(), clock=clock)
    first = await state.read_controls()
    clock.now += 4.9
    assert await state.read_controls() is first
    assert len(android_phone.shell_commands()) == 3  # one dump + one cat + one rm of the dump's file
    clock.now += 0.2
    await state.read_controls()
    assert len(android_phone.shell_commands()) == 6
    await state.read_controls(force=True)
    assert len(android_phone.shell_commands()) == 9


async def test_an_action_forgets_the_controls_whatever_their_age(android_phone: SimulatedPhone) -> None:
    state = MobileServerState(android_phone.adb_client(), clock=Clock())
    await state.read_controls()
    assert state.find_control("2") is not None
    state.after_action()
    assert state.find_control("2") is None
    assert state.ui_tree.value is None


def test_invalidate_each_cache_type() -> None:
    clock = Clock()
    state = MobileServerState(Adb("adb"), clock=clock)
    state.apps.put(["com.a.b"], clock.now)
    state.device_info.put({"model": "x"}, clock.now)
    state.last_apps = {"1": "com.a.b"}
    assert state.invalidate("device_info") == ["device_info"]
    assert state.device_info.fresh(clock.now) is None and state.apps.fresh(clock.now) == ["com.a.b"]
    assert state.invalidate("all") == ["apps", "controls", "ui_tree", "device_info"]
    assert state.apps.value is None and state.last_apps == {}


def test_ttls_of_apps_and_device_info() -> None:
    clock = Clock()
    state = MobileServerState(Adb("adb"), clock=clock)
    state.apps.put(["com.a.b"], clock.now)
    state.device_info.put({"model": "x"}, clock.now)
    clock.now += 59.9
    assert state.device_info.fresh(clock.now) is not None
    clock.now += 0.2
    assert state.device_info.fresh(clock.now) is None
    assert state.apps.fresh(clock.now) is not None
    clock.now += 240
    assert state.apps.fresh(clock.now) is None


def test_one_state_per_device_and_sessions_pass_their_phone_to_the_servers() -> None:
    phone = Adb("/opt/adb", "phone-1")
    assert mobile_state(phone) is mobile_state(Adb("/opt/adb", "phone-1"))
    assert mobile_state(phone) is not mobile_state(Adb("/opt/adb", "phone-2"))
    registry = MobileRegistry(mobile_state(phone))
    assert registry.state is mobile_state(phone)
    # The other in-process servers are still there; nothing global knows about this session.
    assert {"BashExecutor", "MobileDataCollector", "MobileExecutor"} <= set(registry.names())
    assert not hasattr(state_module, "_BOUND")


def test_the_options_device_falls_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_ADB_SERIAL, "env-serial")
    monkeypatch.setenv(ENV_ADB_PATH, "/env/adb")
    assert device_adb() == Adb("/env/adb", "env-serial")
    assert device_adb("given", "/given/adb") == Adb("/given/adb", "given")


class Spy:
    """Wraps a function and records the thread each call ran in."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.threads: list[int] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.get_ident())
        return self.real(*args, **kwargs)


class PullingAdb(Adb):
    """A phone whose ``exec-out screencap`` gives no PNG (old adb): screencap falls back to pull."""

    async def run(self, *args: str, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        if args[0] == "pull":
            await asyncio.to_thread(Path(args[2]).write_bytes, b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
        return b"not a png"


async def test_parsing_encoding_and_temp_folders_stay_off_the_event_loop(
    android_phone: SimulatedPhone, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    parse, encode, mkdtemp = (
        Spy(state_module.parse_controls),
        Spy(collector_module.png_data_url),
        Spy(tempfile.mkdtemp),
    )
    monkeypatch.setattr(state_module, "parse_controls", parse)
    monkeypatch.setattr(collector_module, "png_data_url", encode)
    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    state = MobileServerState(android_phone.adb_client())
    async with Client(create_data_collector_server(state)) as data:
        shot = await data.call_tool("capture_screenshot", {})
        assert not shot.is_error
        await data.call_tool("get_app_window_controls_target_info", {})
    assert (await PullingAdb("adb").screencap_png()).startswith(b"\x89PNG")
    assert parse.threads and encode.threads and mkdtemp.threads
    assert loop_thread not in parse.threads + encode.threads + mkdtemp.threads
