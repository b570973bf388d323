"""DeviceRegistry: profiles, checked status transitions, system info."""

from __future__ import annotations

import pytest

from starweave.errors import InvalidDeviceTransition, UnknownDevice
from starweave.galaxy.devices.profile import DeviceStatus
from starweave.galaxy.devices.registry import ALLOWED_TRANSITIONS, DeviceRegistry

S = DeviceStatus


def registry() -> DeviceRegistry:
    reg = DeviceRegistry()
    reg.register_device("d1", "ws://h:1/ws", "Linux", ["shell"], {"location": "lab"}, max_retries=3)
    return reg


def test_register_and_lookup() -> None:
    reg = registry()
    profile = reg.get_device("d1")
    assert profile is not None and profile.status == S.DISCONNECTED and profile.os == "linux"
    assert profile.max_retries == 3 and reg.is_device_registered("d1") and reg.device_ids() == ["d1"]
    with pytest.raises(ValueError, match="already registered"):
        reg.register_device("d1", "ws://h:1/ws")
    with pytest.raises(ValueError, match="must not be empty"):
        reg.register_device("", "ws://h:1/ws")
    with pytest.raises(UnknownDevice, match=r"unknown device 'x' \(known devices: d1\)"):
        reg.require("x")
    assert reg.remove_device("d1") and not reg.remove_device("d1")
    assert reg.unknown_device_message("x") == "unknown device 'x' (known devices: none registered)"


def test_the_normal_life_of_a_device() -> None:
    reg = registry()
    for status in (S.CONNECTING, S.CONNECTED, S.IDLE):
        reg.update_device_status("d1", status)
    assert reg.get_connected_devices() == ["d1"]
    assert reg.set_device_busy("d1", "t1") == S.IDLE
    assert reg.is_device_busy("d1") and reg.get_current_task("d1") == "t1"
    assert reg.get_connected_devices() == ["d1"]  # BUSY is online (the reference said CONNECTED only)
    assert reg.set_device_idle("d1") == S.BUSY and reg.get_current_task("d1") is None
    reg.set_device_busy("d1", "t2")
    assert reg.update_device_status("d1", S.FAILED) == S.BUSY
    assert reg.get_current_task("d1") is None and reg.get_connected_devices() == []
    assert reg.get_all_devices(connected=True) == {} and list(reg.get_all_devices()) == ["d1"]
    reg.update_device_status("d1", S.CONNECTING)  # reconnection
    assert reg.update_device_status("d1", S.CONNECTING) == S.CONNECTING  # same status: no change
    reg.update_device_status("d1", S.DISCONNECTED)


@pytest.mark.parametrize(
    ("start", "target"),
    [(a, b) for a in S for b in S if a != b and b not in ALLOWED_TRANSITIONS[a]],
)
def test_transitions_outside_the_state_machine_are_refused(start: S, target: S) -> None:
    reg = registry()
    reg.get_device("d1").status = start  # type: ignore[union-attr]
    with pytest.raises(InvalidDeviceTransition, match=f"from {start.value} to {target.value}"):
        reg.update_device_status("d1", target)
    assert reg.get_device("d1").status == start  # type: ignore[union-attr]


def test_every_state_can_reach_disconnected_and_idle_is_reachable_from_disconnected() -> None:
    for status in S:
        assert status == S.DISCONNECTED or S.DISCONNECTED in ALLOWED_TRANSITIONS[status]
    reg = registry()
    with pytest.raises(InvalidDeviceTransition):
        reg.set_device_busy("d1", "t")  # DISCONNECTED cannot run tasks


def test_system_info_fills_os_capabilities_and_metadata() -> None:
    reg = DeviceRegistry()
    reg.register_device("d2", "ws://h:1/ws", capabilities=["shell"])
    info = {
        "device_id": "d2",
        "platform": "Linux",
        "os_version": "6.1",
        "cpu_count": 4,
        "memory_total_gb": 8.0,
        "supported_features": ["shell", "files"],
        "custom_metadata": {"rack": "r1"},
        "tags": ["gpu"],
    }
    reg.update_device_system_info("d2", info)
    profile = reg.require("d2")
    assert profile.os == "linux" and profile.capabilities == ["shell", "files"]
    assert profile.metadata["system_info"] == {
        "platform": "Linux",
        "os_version": "6.1",
        "cpu_count": 4,
        "memory_total_gb": 8.0,
    }
    assert profile.metadata["rack"] == "r1" and profile.metadata["tags"] == ["gpu"]
    assert "device_id" not in reg.get_device_system_info("d2")
    reg.set_device_capabilities("d2", {"capabilities": ["python"], "gpu": True})
    assert reg.get_device_capabilities("d2") == ["shell", "files", "python"] and profile.metadata["gpu"]
    reg.update_heartbeat("d2")
    assert reg.snapshot()["d2"]["last_heartbeat"] is not None
    assert reg.increment_connection_attempts("d2") == 1
    reg.reset_connection_attempts("d2")
    assert profile.connection_attempts == 0


def test_a_configured_os_is_kept() -> None:
    reg = registry()
    reg.update_device_system_info("d1", {"platform": "windows"})
    assert reg.require("d1").os == "linux"
