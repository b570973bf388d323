"""Entry point of ``starweave client``: build the device's tool stack and keep it connected."""

from __future__ import annotations

import logging
import platform as _platform
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES
from starweave.aip.resilience import ReconnectionStrategy
from starweave.client.connection import DEFAULT_TASK_START_TIMEOUT
from starweave.client.credentials import TokenStore
from starweave.client.device_client import DeviceClient
from starweave.client.websocket import DeviceWebSocketClient
from starweave.config import load_config
from starweave.config.loader import place_workspace
from starweave.errors import ConfigError, ToolError
from starweave.session.timeouts import tool_timeout
from starweave.tools import ComputerManager, MCPServerManager
from starweave.tools.servers import register_builtin_servers, resolve_workspace
from starweave.tools.servers.shell.sandbox import ensure_sandbox

__all__ = ["EXIT_CONFIG", "ClientOptions", "build_device_client", "run_device_client"]

log = logging.getLogger("starweave.client")

EXIT_CONFIG = 2


def _detect_platform() -> str:
    detected = _platform.system().lower()
    if not detected:
        log.warning("Defaulting to platform: unknown")
        return "unknown"
    return detected


@dataclass
class ClientOptions:
    """What ``starweave client`` needs; backoff and timeout knobs are there for tests and slow links.

    ``max_retries`` None: reconnect for ever (until stopped), waiting at most ``max_backoff`` s
    between attempts. ``state_dir``: where the device token the server issues is kept (None: in
    memory only).
    """

    ws_url: str = "ws://localhost:5000/ws"
    client_id: str = "client_001"
    platform: str = field(default_factory=_detect_platform)
    api_key: str | None = None
    workspace: Path | None = None
    config_dir: Path | None = None
    max_retries: int | None = None
    heartbeat_interval: float = 30.0
    initial_backoff: float = 1.0
    max_backoff: float = 30.0
    registration_timeout: float = 30.0
    # Keep retrying a refused "id already connected" this long: the server drops a half-open
    # connection only after its heartbeat timeout (90 s by default).
    duplicate_wait: float = 120.0
    # The server's frame limit; larger COMMAND_RESULTS are cut down to failures that say so.
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    state_dir: Path | None = None
    task_start_timeout: float = DEFAULT_TASK_START_TIMEOUT


def build_device_client(options: ClientOptions) -> DeviceClient:
    """The DeviceClient with the configured MCP servers, confined to the workspace."""
    config = load_config(options.config_dir)
    workspace = resolve_workspace(options.workspace, config.system.shell.mode)
    place_workspace(config, options.config_dir, workspace)
    register_builtin_servers()
    servers = MCPServerManager(config.system.shell)
    computers = ComputerManager(config.mcp, servers, tool_timeout=tool_timeout(config.system))
    log.info("Platform detected/specified: %s", options.platform)
    return DeviceClient(servers, computers, client_id=options.client_id, platform=options.platform)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


async def run_device_client(options: ClientOptions, report: Callable[[str], None] | None = None) -> int:
    """Run the device client until stopped; returns the exit code (non-zero with a reason reported)."""
    say = report or _to_stderr
    if not options.client_id.strip():
        say("starweave client: the client id is empty; pass --client-id NAME (unique per device)")
        return EXIT_CONFIG
    try:
        device = build_device_client(options)
        # A required sandbox that is missing is a start-up error, not a failure of the first task.
        await ensure_sandbox(device.mcp_server_manager.shell)
    except (ConfigError, ToolError) as exc:
        say(f"starweave client: {exc}")
        return EXIT_CONFIG
    strategy = ReconnectionStrategy(
        max_retries=options.max_retries,
        initial_backoff=options.initial_backoff,
        max_backoff=options.max_backoff,
    )
    endpoint = DeviceWebSocketClient(
        options.ws_url,
        device,
        api_key=options.api_key,
        heartbeat_interval=options.heartbeat_interval,
        reconnection_strategy=strategy,
        registration_timeout=options.registration_timeout,
        duplicate_wait=options.duplicate_wait,
        max_frame_bytes=options.max_frame_bytes,
        token_store=TokenStore(options.state_dir),
        task_start_timeout=options.task_start_timeout,
    )
    try:
        code = await endpoint.connect_and_listen()
    finally:
        await device.aclose()
    if code != 0:
        say(f"starweave client: {endpoint.last_error}")
    return code
