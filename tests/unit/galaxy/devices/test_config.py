"""load_devices_config: both reference formats, ${VAR} expansion and every error."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ConfigError
from starweave.galaxy.devices.config import ConstellationConfig, DeviceConfig, load_devices_config

REPO = Path(__file__).resolve().parents[4]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


LOWER = """
task_name: lab
heartbeat_interval: 10
reconnect_delay: 2.5
max_concurrent_tasks: 4
api_key: ${SW_TEST_KEY}
devices:
  - device_id: a
    server_url: ws://127.0.0.1:5000/ws
    os: Linux
    capabilities: [shell]
    metadata: {location: lab}
    auto_connect: false
    max_retries: 7
  - device_id: b
    server_url: wss://host.example:443/ws
"""


def test_lowercase_single_file(tmp_path: Path) -> None:
    config = load_devices_config(write(tmp_path / "devices.yaml", LOWER), env={"SW_TEST_KEY": "k1"})
    assert config.task_name == "lab" and config.heartbeat_interval == 10.0
    assert config.reconnect_delay == 2.5 and config.max_concurrent_tasks == 4 and config.api_key == "k1"
    assert config.devices == [
        DeviceConfig("a", "ws://127.0.0.1:5000/ws", "linux", ["shell"], {"location": "lab"}, False, 7),
        DeviceConfig("b", "wss://host.example:443/ws"),
    ]
    assert config.device_ids == ["a", "b"] and config.get_device_config("b") is config.devices[1]


def test_uppercase_pair_resolves_device_info_next_to_the_file(tmp_path: Path) -> None:
    sub = tmp_path / "galaxy"
    sub.mkdir()
    write(
        sub / "devices.yaml", "heartbeat_interval: 5\ndevices:\n  - {device_id: x, server_url: ws://h:1/ws}\n"
    )
    constellation = write(
        sub / "constellation.yaml",
        'CONSTELLATION_ID: "my_constellation"\nHEARTBEAT_INTERVAL: 20.0\nRECONNECT_DELAY: 3\n'
        "MAX_CONCURRENT_TASKS: 6\nMAX_STEP: 9\nLOG_TO_MARKDOWN: false\n"
        'DEVICE_INFO: "devices.yaml"\nAPI_KEY: "${NOPE:-fallback}"\n',
    )
    config = load_devices_config(constellation, env={})
    assert config.task_name == "my_constellation" and config.heartbeat_interval == 20.0  # file wins
    assert config.reconnect_delay == 3.0 and config.max_concurrent_tasks == 6 and config.max_step == 9
    assert config.log_to_markdown is False and config.api_key == "fallback"
    assert [d.device_id for d in config.devices] == ["x"]


def test_the_shipped_example_loads() -> None:
    config = load_devices_config(REPO / "config" / "galaxy" / "devices.yaml", env={})
    assert isinstance(config, ConstellationConfig) and len(config.devices) == 2
    assert all(d.os == "linux" and d.server_url.endswith("/ws") for d in config.devices)
    assert config.api_key is None


DEVICE = "  - {device_id: a, server_url: ws://h:1/ws}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("devices:\n  - {server_url: ws://h:1/ws}\n", "devices[0].device_id: missing"),
        ("devices:\n" + DEVICE + "  - {device_id: b}\n", "devices[1].server_url: missing"),
        ("devices:\n" + DEVICE + DEVICE, "devices[1].device_id: duplicate 'a' (already used by devices[0])"),
        (
            "devices:\n  - {device_id: a, server_url: http://h/ws}\n",
            "devices[0].server_url: 'http://h/ws' is not",
        ),
        ("devices:\n  - {device_id: a, server_url: 'ws://h:99999/ws'}\n", "has an invalid port"),
        (
            "devices:\n  - {device_id: 'a b', server_url: ws://h/ws}\n",
            "devices[0].device_id: 'a b' is not a valid",
        ),
        (
            "devices:\n  - {device_id: a, server_url: ws://h/ws, color: red}\n",
            "devices[0].color: unknown key",
        ),
        (
            "devices:\n  - {device_id: a, server_url: ws://h/ws, os: ''}\n",
            "devices[0].os: expected a platform",
        ),
        (
            "devices:\n  - {device_id: a, server_url: ws://h/ws, capabilities: x}\n",
            "capabilities: expected a list",
        ),
        (
            "devices:\n  - {device_id: a, server_url: ws://h/ws, metadata: [1]}\n",
            "metadata: expected a mapping",
        ),
        (
            "devices:\n  - {device_id: a, server_url: ws://h/ws, auto_connect: 1}\n",
            "auto_connect: expected true",
        ),
        (
            "devices:\n  - {device_id: a, server_url: ws://h/ws, max_retries: -1}\n",
            "max_retries: expected a whole",
        ),
        ("devices:\n  - just-a-string\n", "devices[0]: expected a mapping"),
        ("devices: []\n", "devices: expected a non-empty list"),
        ("task_name: x\n", "devices: missing"),
        ("colour: x\ndevices:\n" + DEVICE, "colour: unknown key (known keys: task_name"),
        ("task_name: ''\ndevices:\n" + DEVICE, "task_name: expected a non-empty name"),
        ("heartbeat_interval: 0\ndevices:\n" + DEVICE, "heartbeat_interval: must be positive"),
        ("heartbeat_interval: fast\ndevices:\n" + DEVICE, "heartbeat_interval: expected a number"),
        ("reconnect_delay: -1\ndevices:\n" + DEVICE, "reconnect_delay: must not be negative"),
        ("max_concurrent_tasks: 0\ndevices:\n" + DEVICE, "max_concurrent_tasks: expected a whole number"),
        ("log_to_markdown: yes please\ndevices:\n" + DEVICE, "log_to_markdown: expected true or false"),
        ("api_key: 5\ndevices:\n" + DEVICE, "api_key: expected a string"),
        (
            "api_key: ${SW_UNSET_VAR}\ndevices:\n" + DEVICE,
            "api_key: environment variable SW_UNSET_VAR is not set",
        ),
        ("- a\n- b\n", "(top level): expected a mapping"),
        ("", "(top level): the file is empty"),
        ("devices: [\n", "line "),
        ("HEARTBEAT_INTERVAL: 3\ndevices:\n" + DEVICE, "devices: mixes the UPPERCASE"),
        ("HEARTBEAT_INTERVAL: 3\n", "DEVICE_INFO: missing"),
        ("DEVICE_INFO: nowhere.yaml\n", "DEVICE_INFO: file 'nowhere.yaml' not found"),
        ("DEVICE_INFO: 3\n", "DEVICE_INFO: expected the path"),
        ("DEVICE_INFO: d.yaml\nMAX_STEPS: 3\n", "MAX_STEPS: unknown key"),
    ],
)
def test_every_problem_is_reported_as_file_key_problem(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "devices.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_devices_config(path, env={})
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_errors_in_the_referenced_devices_file_name_that_file(tmp_path: Path) -> None:
    devices = write(tmp_path / "d.yaml", "devices:\n  - {device_id: a}\n")
    constellation = write(tmp_path / "c.yaml", f"DEVICE_INFO: {devices}\n")
    with pytest.raises(ConfigError, match=r"d\.yaml: devices\[0\]\.server_url: missing"):
        load_devices_config(constellation, env={})


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: \(file\): not found"):
        load_devices_config(tmp_path / "nope.yaml")
