"""MobileServerState: the spec's TTLs on an injected clock, and invalidation after actions."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.mobile_kit import fake_device

from starweave.config.models import ShellConfig
from starweave.tools.mobile import Adb
from starweave.tools.servers.mobile import MobileServerState, bind_device, mobile_state, state_for_session


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_controls_and_tree_live_five_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device = fake_device(tmp_path, monkeypatch)
    clock = Clock()
    state = MobileServerState(device.adb, clock=clock)
    first = await state.read_controls()
    clock.now += 4.9
    assert await state.read_controls() is first
    assert len(device.remote()) == 2  # one dump + one cat
    clock.now += 0.2
    await state.read_controls()
    assert len(device.remote()) == 4
    await state.read_controls(force=True)
    assert len(device.remote()) == 6


async def test_an_action_forgets_the_controls_whatever_their_age(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = MobileServerState(fake_device(tmp_path, monkeypatch).adb, clock=Clock())
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


def test_one_state_per_device_and_sessions_bind_their_phone() -> None:
    phone = Adb("/opt/adb", "phone-1")
    assert mobile_state(phone) is mobile_state(Adb("/opt/adb", "phone-1"))
    assert mobile_state(phone) is not mobile_state(Adb("/opt/adb", "phone-2"))
    shell = ShellConfig.model_validate({})
    bind_device(shell, phone)
    assert state_for_session(shell) is mobile_state(phone)
