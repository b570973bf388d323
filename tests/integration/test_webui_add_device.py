"""Issue 26: the WebUI's add-device form (POST /api/devices) on a real loopback server.

A device that comes in over HTTP gets no credential from the devices file, its values are never
``${VAR}``-expanded, and its URL must name an allowed host (this machine, or one the file lists).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml
from integration.control_plane_kit import recording, webui

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
