"""A real DeviceClient: the builtin MCP servers in-process, confined to a temporary workspace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from starweave.client.device_client import DeviceClient
from starweave.client.runner import ClientOptions, build_device_client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
async def device(tmp_path: Path, workspace: Path) -> AsyncIterator[DeviceClient]:
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    client = build_device_client(
        ClientOptions(client_id="dev-1", platform="linux", workspace=workspace, config_dir=config_dir)
    )
    yield client
    await client.aclose()
