"""Issue 26: the WebUI's add-device form (POST /api/devices) on a real loopback server.

A device that comes in over HTTP gets no credential from the devices file, its values are never
``${VAR}``-expanded, and its URL must name an allowed host (this machine, or one the file lists).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from integration.control_plane_kit import recording, webui

from starweave.errors import ConfigError
from starweave.galaxy.devices import load_devices_config

FLEET_KEY = "fleet-key-0123456789abcdef"


def devices_yaml(operator_url: str) -> str:
    return (
        f"api_key: {FLEET_KEY}\nheartbeat_interval: 5\ndevices:\n"
        f"  - device_id: lab_1\n    server_url: {operator_url}\n    os: linux\n"
        "    capabilities: [shell]\n    auto_connect: false\n"
    )


def form(device_id: str, server_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "device_id": device_id,
        "server_url": server_url,
        "os": "linux",
        "capabilities": ["shell"],
        "metadata": {},
        "auto_connect": True,
        "max_retries": 0,
        **extra,
    }


async def test_a_device_added_over_http_is_sent_no_file_credential(tmp_path: Path) -> None:
    async with recording() as operator, recording() as stranger:
        devices_file = tmp_path / "devices.yaml"
        devices_file.write_text(devices_yaml(operator.url))
        async with webui(tmp_path, devices_file) as (url, service), httpx.AsyncClient(base_url=url) as http:
            added = await http.post("/api/devices", json=form("added_1", stranger.url))
            assert added.status_code == 200, added.text
            (handshake,) = await stranger.wait()
            assert "x-api-key" not in handshake and FLEET_KEY not in str(handshake)
            # The operator's own device still gets the key the operator put in the file.
            manager = service.client.device_manager
            assert manager is not None
            await manager.connect_device("lab_1")
            assert (await operator.wait())[0]["x-api-key"] == FLEET_KEY
        # The mark stays in the file: at the next start the device is still sent nothing.
        entry = yaml.safe_load(devices_file.read_text())["devices"][1]
        assert entry["device_id"] == "added_1" and entry["added_over_http"] is True
        again = load_devices_config(devices_file).get_device_config("added_1")
        assert again is not None and again.added_over_http
        stranger.knocked.clear()
        async with webui(tmp_path, devices_file) as (_url, service):
            manager = service.client.device_manager
            assert manager is not None
            await manager.connect_device("added_1")
            assert all("x-api-key" not in h for h in await stranger.wait())


async def test_variables_typed_into_the_form_are_never_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SW_TEST_SECRET", "sk-live-secret-value")
    monkeypatch.delenv("SW_TEST_UNSET", raising=False)
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(devices_yaml("ws://127.0.0.1:9/ws"))
    async with webui(tmp_path, devices_file) as (url, _service), httpx.AsyncClient(base_url=url) as http:
        # Before the fix the id "${SW_TEST_SECRET}" was expanded when the new file was checked (and
        # at every start), and an unset variable was named in the 422.
        answers = {
            name: await http.post("/api/devices", json=form(f"${{{name}}}", "ws://127.0.0.1:9/ws"))
            for name in ("SW_TEST_SECRET", "SW_TEST_UNSET")
        }
        for name, answer in answers.items():
            assert answer.status_code == 422, answer.text
            assert answer.json()["detail"].replace(name, "VAR") == answers["SW_TEST_SECRET"].json()[
                "detail"
            ].replace("SW_TEST_SECRET", "VAR")
            assert "not set" not in answer.text and "sk-live" not in answer.text
        noted = form("noted_1", "ws://127.0.0.1:9/ws", auto_connect=False)
        noted["metadata"] = {"note": "${SW_TEST_SECRET}", "other": "${SW_TEST_UNSET}"}
        noted["capabilities"] = ["${SW_TEST_SECRET}"]
        added = await http.post("/api/devices", json=noted)
        assert added.status_code == 200, added.text
        assert "sk-live" not in added.text
    # The next start reads the file again: still the text typed, nothing expanded.
    loaded = load_devices_config(devices_file).get_device_config("noted_1")
    assert loaded is not None
    assert loaded.metadata == {"note": "${SW_TEST_SECRET}", "other": "${SW_TEST_UNSET}"}
    assert loaded.capabilities == ["${SW_TEST_SECRET}"]
    async with webui(tmp_path, devices_file) as (url, _service), httpx.AsyncClient(base_url=url) as http:
        listed = (await http.get("/api/devices")).json()["devices"]
        assert set(listed) == {"lab_1", "noted_1"} and "sk-live" not in str(listed)


async def test_a_devices_file_that_does_not_load_is_not_described_to_the_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(devices_yaml("ws://127.0.0.1:9/ws"))
    async with webui(tmp_path, devices_file) as (url, _service), httpx.AsyncClient(base_url=url) as http:
        # The operator's file now names a variable that is not set (as after a change of environment).
        devices_file.write_text(devices_yaml("ws://127.0.0.1:${SW_OPERATOR_PORT}/ws"))
        monkeypatch.delenv("SW_OPERATOR_PORT", raising=False)
        answer = await http.post("/api/devices", json=form("late_1", "ws://127.0.0.1:9/ws"))
        assert answer.status_code == 500
        assert answer.json() == {"detail": "Failed to add device: the devices file does not load"}


REFUSED_URLS = [
    ("ws://169.254.169.254/latest/meta-data", 403),  # the cloud metadata address
    ("ws://[::ffff:169.254.169.254]/ws", 403),  # the same, IPv4-mapped
    ("ws://[::ffff:a9fe:a9fe]:80/ws", 403),  # the same, in hex
    ("ws://evil.example:5000/ws", 403),  # a host the operator never named
    ("ws://10.0.0.99:5000/ws", 403),  # nor this one
    ("ws://user:password@127.0.0.1:5000/ws", 422),  # userinfo
    ("ws://127.0.0.1:5000@169.254.169.254/ws", 422),  # userinfo hiding the real host
    ("ws://127.0.0.1\\@169.254.169.254/ws", 422),  # a backslash parsers read differently
    ("ws://127.0.0.1 @169.254.169.254/ws", 422),
    ("http://127.0.0.1:5000/ws", 422),
]


async def test_the_form_connects_only_to_allowed_hosts(tmp_path: Path) -> None:
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(devices_yaml("ws://10.0.0.9:5000/ws"))
    before = devices_file.read_text()
    async with (
        recording() as other_service,
        webui(tmp_path, devices_file) as (url, service),
        httpx.AsyncClient(base_url=url) as http,
    ):
        manager = service.client.device_manager
        assert manager is not None
        for index, (server_url, status) in enumerate(REFUSED_URLS):
            answer = await http.post("/api/devices", json=form(f"bad_{index}", server_url, max_retries=5))
            assert answer.status_code == status, (server_url, answer.text)
            assert manager.get_device_info(f"bad_{index}") is None, server_url
        # userinfo on the loopback URL of a listener: refused before anything connects to it.
        credentials = other_service.url.replace("ws://", "ws://admin:hunter2@")
        assert (await http.post("/api/devices", json=form("creds", credentials))).status_code == 422
        assert manager.get_device_info("creds") is None
        # A form cannot make the manager knock on a port for ever.
        endless = await http.post("/api/devices", json=form("endless", other_service.url, max_retries=1000))
        assert (endless.status_code, endless.json()["detail"]) == (422, "max_retries must be at most 10")
        assert devices_file.read_text() == before  # nothing stored
        assert other_service.handshakes == []
        # Allowed: this machine in any spelling, and the host the operator's device uses.
        for index, server_url in enumerate(
            [
                "ws://10.0.0.9:6000/ws",
                "ws://[::ffff:127.0.0.1]:9/ws",
                "ws://127.0.0.2:9/ws",
                "ws://[0:0:0:0:0:0:0:1]:9/ws",
                "ws://LOCALHOST:9/ws",
            ]
        ):
            good = form(f"good_{index}", server_url, auto_connect=False)
            answer = await http.post("/api/devices", json=good)
            assert answer.status_code == 200, (server_url, answer.text)
    assert len(load_devices_config(devices_file).devices) == 6


def test_the_loader_checks_a_form_entry_again(tmp_path: Path) -> None:
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(
        devices_yaml("ws://10.0.0.9:5000/ws")
        + "  - device_id: planted\n    server_url: ws://169.254.169.254/ws\n    added_over_http: true\n"
    )
    with pytest.raises(ConfigError, match=r"devices\[1\]\.server_url: Host '169.254.169.254' is not allowed"):
        load_devices_config(devices_file)
    # The operator vouches for it by deleting the mark.
    devices_file.write_text(devices_file.read_text().replace("    added_over_http: true\n", ""))
    assert load_devices_config(devices_file).device_ids == ["lab_1", "planted"]
