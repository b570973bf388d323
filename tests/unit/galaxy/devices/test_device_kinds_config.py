"""devices.yaml ``os``: the device kinds (linux, linux-desktop, windows, mobile) and their spellings."""

from __future__ import annotations

import logging
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


def test_an_unknown_os_loads_as_written_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The reference documents os as free text: its files with "ios" or "ubuntu" must load.
    path = tmp_path / "devices.yaml"
    path.write_text(
        "devices:\n"
        "  - {device_id: a, server_url: ws://h/ws, os: ios, capabilities: [touch]}\n"
        "  - {device_id: b, server_url: ws://h/ws, os: Ubuntu}\n"
        "  - {device_id: c, server_url: ws://h/ws, os: MacOS}\n"
    )
    with caplog.at_level(logging.WARNING, logger="starweave.galaxy.devices"):
        config = load_devices_config(path, env={})
    assert [d.os for d in config.devices] == ["ios", "Ubuntu", "darwin"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"{path}: devices[0].os: 'ios' is not a device kind Starweave knows "
        "(linux, darwin, linux-desktop, windows, mobile); kept as written",
        f"{path}: devices[1].os: 'Ubuntu' is not a device kind Starweave knows "
        "(linux, darwin, linux-desktop, windows, mobile); kept as written",
    ]


REFERENCE_LAYOUT = """
task_name: "galaxy_demo"
heartbeat_interval: 30.0
reconnect_delay: 5.0
max_concurrent_tasks: 3
devices:
  - device_id: "linux_agent_1"
    server_url: "ws://localhost:5001/ws"
    os: "ubuntu"
    capabilities: ["shell", "files"]
    metadata: {location: "lab"}
    auto_connect: true
    max_retries: 5
  - device_id: "ios_phone"
    server_url: "ws://localhost:5002/ws"
    os: "ios"
    capabilities: ["mobile", "touch"]
    auto_connect: false
"""


def test_a_reference_layout_file_with_free_text_os_loads_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text(REFERENCE_LAYOUT)
    config = load_devices_config(path, env={})
    assert [(d.device_id, d.os, d.capabilities) for d in config.devices] == [
        ("linux_agent_1", "ubuntu", ["shell", "files"]),
        ("ios_phone", "ios", ["mobile", "touch"]),
    ]
    assert config.devices[1].auto_connect is False


@pytest.mark.parametrize("value", ["", "  ", 7, ["linux"]])
def test_an_os_that_is_not_a_word_is_refused(tmp_path: Path, value: object) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text(f"devices:\n  - {{device_id: a, server_url: 'ws://h/ws', os: {value!r}}}\n")
    with pytest.raises(ConfigError, match=r"devices\[0\]\.os: expected a platform name \(linux, darwin"):
        load_devices_config(path, env={})


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
