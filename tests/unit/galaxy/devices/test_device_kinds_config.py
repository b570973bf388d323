"""devices.yaml ``os``: the device kinds (linux, linux-desktop, windows, mobile) and their spellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ConfigError
from starweave.galaxy.devices.config import load_devices_config
from starweave.galaxy.devices.registry import DeviceRegistry

KINDS = """
devices:
  - {device_id: box, server_url: ws://127.0.0.1:5000/ws, os: linux}
  - device_id: desk
    server_url: ws://127.0.0.1:5000/ws
    os: Linux-Desktop
    capabilities: [mousepad]
    metadata: {description: the office PC}
  - {device_id: pc, server_url: ws://127.0.0.1:5000/ws, os: windows}
  - {device_id: phone, server_url: ws://127.0.0.1:5000/ws, os: android}
  - {device_id: mac, server_url: ws://127.0.0.1:5000/ws, os: macos}
"""


def test_every_device_kind_and_the_references_spellings_load(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text(KINDS)
    config = load_devices_config(path, env={})
    assert [d.os for d in config.devices] == ["linux", "linux-desktop", "windows", "mobile", "darwin"]
    assert config.devices[1].capabilities == ["mousepad"]


def test_an_unknown_os_names_the_kinds(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text("devices:\n  - {device_id: a, server_url: ws://h/ws, os: toaster}\n")
    with pytest.raises(ConfigError) as caught:
        load_devices_config(path, env={})
    assert str(caught.value) == (
        f"{path}: devices[0].os: unknown platform 'toaster'; use one of linux, darwin, linux-desktop, "
        "windows, mobile"
    )


@pytest.mark.parametrize("configured", ["unknown", "linux-desktop"])
def test_the_profile_takes_the_kind_and_capabilities_the_device_announces(configured: str) -> None:
    registry = DeviceRegistry()
    registry.register_device("desk", "ws://h:1/ws", os=configured, capabilities=["mousepad"])
    registry.update_device_system_info(
        "desk", {"platform": "linux-desktop", "supported_features": ["linux", "desktop", "gui", "mousepad"]}
    )
    profile = registry.require("desk")
    assert profile.os == profile.device_type == "linux-desktop"
    assert profile.capabilities == ["mousepad", "linux", "desktop", "gui"]
    assert profile.to_dict()["capabilities"] == ["mousepad", "linux", "desktop", "gui"]
