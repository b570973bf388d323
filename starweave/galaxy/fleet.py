"""A local device fleet for ``starweave galaxy --local N``: one agent server and N Linux device
clients on loopback, each device confined to its own workspace folder, all stopped together.

The server and the clients run in this process (the server's device sessions can share the
ConstellationAgent's model client, so the embedded model is loaded once); they still talk over
real WebSockets exactly as remote devices do.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from starweave.client.runner import ClientOptions, run_device_client
from starweave.config.models import StarweaveConfig
from starweave.errors import SessionError
from starweave.llm.base import LLMClient
from starweave.server.app import RunningServer, start_server
from starweave.server.local_token import publish_local_token, withdraw_local_token
from starweave.server.security import API_KEY_HEADER
from starweave.server.settings import ServerSettings
from starweave.session.service import LinuxServiceSessionFactory

log = logging.getLogger("starweave.galaxy.fleet")

LOCAL_DEVICE_PREFIX = "local_linux_"


@dataclass
class LocalDevice:
    """One device client of the fleet."""

    device_id: str
    workspace: Path
    task: asyncio.Task[int]
    messages: list[str] = field(default_factory=list)


@dataclass
class LocalFleet:
    """The running server and devices; ``stop()`` ends them all."""

    server: RunningServer
    factory: LinuxServiceSessionFactory
    devices: list[LocalDevice]
    # The server's key: loopback is not a user boundary, so the fleet's server has one too.
    api_key: str = field(default="", repr=False)

    @property
    def ws_url(self) -> str:
        """The server's AIP endpoint."""
        return f"ws://127.0.0.1:{self.server.port}/ws"

    def device_entries(self) -> list[dict[str, Any]]:
        """devices.yaml-style entries for the device manager."""
        return [
            {
                "device_id": device.device_id,
                "server_url": self.ws_url,
                "os": "linux",
                "capabilities": ["shell", "files"],
                "metadata": {"workspace": str(device.workspace), "local": True},
            }
            for device in self.devices
        ]

    async def stop(self) -> None:
        """Stop every device client, then the server."""
        for device in self.devices:
            await _cancel(device.task)
        await asyncio.to_thread(withdraw_local_token, self.server.port, self.api_key)
        await self.server.stop()
        await self.factory.aclose()


async def _cancel(task: asyncio.Task[Any]) -> None:
    if task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _wait_online(
    server: RunningServer, device_ids: list[str], devices: list[LocalDevice], wait: float, api_key: str
) -> None:
    """Return once the server lists every device; fail with the clients' own messages otherwise."""
    headers = {API_KEY_HEADER: api_key}
    async with httpx.AsyncClient(base_url=server.url, timeout=5.0, headers=headers) as http:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            online = set((await http.get("/api/clients")).json().get("online_clients", []))
            if set(device_ids) <= online:
                return
            ended = [d for d in devices if d.task.done()]
            if ended or loop.time() > deadline:
                reasons = "; ".join(f"{d.device_id}: {' '.join(d.messages) or 'no message'}" for d in ended)
                missing = sorted(set(device_ids) - online)
                raise SessionError(
                    f"local devices {missing} did not come online within {wait:g}s"
                    + (f" ({reasons})" if reasons else "")
                )
            await asyncio.sleep(0.05)


async def start_local_fleet(
    count: int,
    root: Path,
    config: StarweaveConfig,
    llm: LLMClient | None = None,
    auto_approve: bool = False,
    heartbeat_interval: float = 5.0,
    ready_timeout: float = 30.0,
) -> LocalFleet:
    """Start the server on a free loopback port and ``count`` devices with workspaces under ``root``."""
    if count < 1:
        raise SessionError(f"--local needs at least one device, got {count}")
    factory = LinuxServiceSessionFactory(config, llm=llm, auto_approve=auto_approve)
    api_key = secrets.token_urlsafe(32)
    settings = ServerSettings(
        host="127.0.0.1",
        port=0,
        platform="linux",
        log_level="warning",
        api_key=api_key,
        require_key_on_loopback=True,
    )
    server = await start_server(settings, factory)
    devices: list[LocalDevice] = []
    try:
        # As `starweave server` does: this user's own Galaxy (a devices file naming this fleet's URL)
        # reads the key from the owner-only file; no other user can.
        await asyncio.to_thread(publish_local_token, server.port, api_key)
        for index in range(1, count + 1):
            device_id = f"{LOCAL_DEVICE_PREFIX}{index}"
            workspace = (root / device_id).resolve()
            workspace.mkdir(parents=True, exist_ok=True)
            options = ClientOptions(
                ws_url=f"ws://127.0.0.1:{server.port}/ws",
                client_id=device_id,
                platform="linux",
                api_key=api_key,
                workspace=workspace,
                heartbeat_interval=heartbeat_interval,
                max_retries=3,
                initial_backoff=0.2,
                duplicate_wait=5.0,
            )
            messages: list[str] = []
            task = asyncio.create_task(run_device_client(options, report=messages.append), name=device_id)
            devices.append(LocalDevice(device_id, workspace, task, messages))
        await _wait_online(server, [d.device_id for d in devices], devices, ready_timeout, api_key)
    except BaseException:
        for device in devices:
            await _cancel(device.task)
        await asyncio.to_thread(withdraw_local_token, server.port, api_key)
        await server.stop()
        await factory.aclose()
        raise
    log.info("Local fleet: %d devices on %s", count, server.url)
    return LocalFleet(server, factory, devices, api_key)
