"""Adding a device from the page: the reference's validation messages; the devices file grows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from starweave.galaxy.devices import load_devices_config
from starweave.galaxy.webui.devices import DeviceRequestError, append_device, validate_device

GOOD = {
    "device_id": "new_1",
    "server_url": "ws://127.0.0.1:5000/ws",
    "os": "linux",
    "capabilities": ["shell"],
    "metadata": {"room": "lab"},
    "auto_connect": False,
    "max_retries": 3,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"device_id": ""}, "Device ID is required"),
        ({"device_id": None}, "Device ID is required"),
        ({"server_url": " "}, "Server URL is required"),
        ({"server_url": "http://host:5000/ws"}, "Invalid WebSocket URL"),
        ({"server_url": "ws://"}, "Invalid WebSocket URL"),
        ({"os": ""}, "OS is required"),
        ({"capabilities": []}, "At least one capability required"),
        ({"capabilities": "shell"}, "At least one capability required"),
    ],
)
def test_invalid_devices_get_the_reference_messages(change: dict[str, Any], message: str) -> None:
    with pytest.raises(DeviceRequestError) as caught:
        validate_device({**GOOD, **change})
    assert (caught.value.status, caught.value.detail) == (422, message)


def test_a_valid_device_keeps_every_field() -> None:
    device = validate_device(GOOD)
    assert (device.device_id, device.os, device.capabilities, device.max_retries) == (
        "new_1",
        "linux",
        ["shell"],
        3,
    )
    assert device.metadata == {"room": "lab"} and device.auto_connect is False


DEVICES_YAML = """\
# the lab's devices
task_name: lab
devices:
  - device_id: old_1  # the first one
    server_url: ws://127.0.0.1:5000/ws
    os: linux
    capabilities: [shell]
"""


def test_appending_keeps_the_file_and_its_comments(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text(DEVICES_YAML)
    append_device(path, validate_device(GOOD), set())
    text = path.read_text()
    assert text.startswith(DEVICES_YAML)  # comments and layout untouched
    config = load_devices_config(path)
    assert config.device_ids == ["old_1", "new_1"] and config.task_name == "lab"
    assert config.get_device_config("new_1").metadata == {"room": "lab"}  # type: ignore[union-attr]


def test_a_file_whose_list_is_not_last_is_rewritten_with_the_same_data(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text("devices: [{device_id: old_1, server_url: 'ws://h:1/ws'}]\ntask_name: lab\n")
    append_device(path, validate_device(GOOD), set())
    data = yaml.safe_load(path.read_text())
    assert [d["device_id"] for d in data["devices"]] == ["old_1", "new_1"] and data["task_name"] == "lab"


def test_missing_file_and_duplicates_are_refused(tmp_path: Path) -> None:
    device = validate_device(GOOD)
    with pytest.raises(DeviceRequestError) as missing:
        append_device(tmp_path / "devices.yaml", device, set())
    assert (missing.value.status, missing.value.detail) == (404, "devices.yaml not found")
    path = tmp_path / "devices.yaml"
    path.write_text(DEVICES_YAML)
    for known, device_id in ((set(), "old_1"), ({"new_1"}, "new_1")):
        with pytest.raises(DeviceRequestError) as duplicate:
            append_device(path, validate_device({**GOOD, "device_id": device_id}), known)
        assert (duplicate.value.status, duplicate.value.detail) == (
            409,
            f"Device ID '{device_id}' already exists",
        )
    assert path.read_text() == DEVICES_YAML


def test_an_entry_the_loader_refuses_never_lands_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text(DEVICES_YAML)
    with pytest.raises(DeviceRequestError) as caught:
        append_device(path, validate_device({**GOOD, "device_id": "bad id!"}), set())
    assert caught.value.status == 422 and "not a valid id" in caught.value.detail
    assert path.read_text() == DEVICES_YAML
    assert not [p for p in tmp_path.iterdir() if p.name != "devices.yaml"]  # no temporary file left
