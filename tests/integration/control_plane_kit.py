"""Helpers for the control-plane tests (issue 26): a listener that records who knocks, and the
Galaxy WebUI on a real loopback server with the device manager a devices file gives it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path

import uvicorn
from e2e.test_galaxy_cli import write
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.galaxy.devices import ConstellationDeviceManager, load_devices_config
from starweave.galaxy.webui import WebUIService, create_app
from starweave.server.app import serve_in_task
from starweave.server.settings import ServerSettings

PLAN = {"thought": "nothing to do", "status": "FINISH", "constellation": {"tasks": [], "dependencies": []}}
DEADLINE = 60.0


@dataclass
class Recorder:
    """A WebSocket listener on 127.0.0.1 that records every handshake's headers and refuses it (403),
    as a service that is not an agent server would."""

    port: int = 0
    handshakes: list[Headers] = field(default_factory=list)
    knocked: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        """``ws://127.0.0.1:PORT/ws``."""
        return f"ws://127.0.0.1:{self.port}/ws"

    def _record(self, _connection: ServerConnection, request: Request) -> Response:
        self.handshakes.append(request.headers)
        self.knocked.set()
        return Response(HTTPStatus.FORBIDDEN, "Forbidden", Headers(), b"not an agent server\n")

    async def wait(self) -> list[Headers]:
        """The handshakes so far, once there is at least one (within DEADLINE)."""
        async with asyncio.timeout(DEADLINE):
            await self.knocked.wait()
        return self.handshakes


@asynccontextmanager
async def recording() -> AsyncIterator[Recorder]:
    """A started :class:`Recorder`."""
    recorder = Recorder()
    async with serve(lambda _c: asyncio.sleep(0), "127.0.0.1", 0, process_request=recorder._record) as server:
        recorder.port = next(iter(server.sockets)).getsockname()[1]
        yield recorder


@asynccontextmanager
async def webui(tmp_path: Path, devices_file: Path) -> AsyncIterator[tuple[str, WebUIService]]:
    """The WebUI for ``devices_file`` on 127.0.0.1 (a free port): its devices registered as
    ``starweave galaxy --devices`` registers them (with the file's ``api_key``), none connected
    first; yields (``http://127.0.0.1:PORT``, the service)."""
    options = GalaxyOptions(
        devices_file=devices_file,
        provider="replay",
        replay_file=write(tmp_path / "planner.jsonl", [PLAN]),
        log_dir=tmp_path / "logs",
        workspace=tmp_path / "ws",
        live=False,
        yes=True,
    )
    client = GalaxyClient(options)
    config = load_devices_config(devices_file)
    client.device_manager = ConstellationDeviceManager(
        config.task_name,
        heartbeat_interval=config.heartbeat_interval,
        reconnect_delay=0.2,
        api_key=config.api_key,
    )
    service = WebUIService(client)
    await client.device_manager.register_from_config(config)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(service, ServerSettings(host="127.0.0.1", port=0)),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="off",
            ws_max_size=ServerSettings(host="127.0.0.1", port=0).ws_max_size,  # as run_webui sets it
        )
    )
    task, port = await serve_in_task(server)
    try:
        yield f"http://127.0.0.1:{port}", service
    finally:
        server.should_exit = True
        await task
        await service.aclose()
