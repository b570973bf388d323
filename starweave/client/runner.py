"""Entry point of ``starweave client``: build the device's tool stack and keep it connected."""

from __future__ import annotations

import logging
import os
import platform as _platform
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from starweave.aip.frame_limit import DEFAULT_MAX_FRAME_BYTES
from starweave.aip.resilience import ReconnectionStrategy
from starweave.client.connection import DEFAULT_TASK_START_TIMEOUT
from starweave.client.credentials import TokenStore
from starweave.client.device_client import DeviceClient
from starweave.client.websocket import DeviceWebSocketClient
from starweave.config import StarweaveConfig, load_config
from starweave.config.loader import place_workspace
from starweave.config.models import default_mcp
from starweave.device_kinds import DeviceKind, device_capabilities, device_kind
from starweave.errors import ConfigError, ToolError
from starweave.session.timeouts import tool_timeout
from starweave.tools import ComputerManager, MCPServerManager
from starweave.tools.mcp_manager import MCPRegistry
from starweave.tools.sandbox.choice import ensure_sandbox
from starweave.tools.servers import register_builtin_servers, resolve_workspace

__all__ = [
    "CLIENT_PLATFORMS",
    "CLIENT_PROBES",
    "EXIT_CONFIG",
    "ClientOptions",
    "build_device_client",
    "probe_device",
    "run_device_client",
]

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
    # No key given: send the local token of this user's server on loopback (server/local_token.py).
    local_token: bool = False
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
    #: ``--platform mobile``: the phone's adb serial ("" for the only attached one) and adb program.
    serial: str = ""
    adb_path: str = ""


Closer = Callable[[], Awaitable[None]]


def _shell_device(kind: DeviceKind, config: StarweaveConfig, options: ClientOptions) -> list[Closer]:
    """A shell device needs nothing beyond the LinuxAgent's servers of mcp.yaml."""
    return []


def _desktop_device(kind: DeviceKind, config: StarweaveConfig, options: ClientOptions) -> list[Closer]:
    """A desktop device: a graphical session to drive, and the desktop UI servers of the HostAgent
    and AppAgents (the shipped ones when mcp.yaml was written for the LinuxAgent alone). Returns
    the closer of the backend those servers share (keyed by the session's ShellConfig)."""
    problem = display_problem(kind.name)
    if problem:
        raise ConfigError(problem)
    shipped = default_mcp()
    for name in ("HostAgent", "AppAgent"):
        config.mcp.setdefault(name, shipped[name])
    shell = config.system.shell

    async def close_desktop() -> None:
        # Looked up at close time: the servers create the state on first use, after the
        # workspace is placed into ``shell``.
        from starweave.tools.servers.desktop import shared_ui_state

        await shared_ui_state(shell).aclose()

    return [close_desktop]


def _mobile_device(kind: DeviceKind, config: StarweaveConfig, options: ClientOptions) -> list[Closer]:
    """A phone: the MobileAgent's servers (:func:`_device_registry` builds them on the phone of
    ``--serial`` / ``--adb-path``; :func:`probe_device` checks the phone before registering)."""
    from starweave.client.mobile_device import bind_phone

    bind_phone(config, options.serial, options.adb_path)
    return []


CLIENT_PLATFORMS: dict[str, Callable[[DeviceKind, StarweaveConfig, ClientOptions], list[Closer]]] = {
    "linux": _shell_device,
    "darwin": _shell_device,
    "linux-desktop": _desktop_device,
    "windows": _desktop_device,
    "mobile": _mobile_device,
}
"""How the client prepares each device platform (``--platform``) before starting its MCP servers;
a new kind of device is one entry here and one in ``starweave.device_kinds.DEVICE_KINDS``."""


async def _phone_probe(servers: MCPServerManager) -> list[str]:
    """A phone: ``adb devices`` sees it; its user apps' short names."""
    from starweave.client.mobile_device import phone_apps

    return await phone_apps(servers.registry)


Probe = Callable[[MCPServerManager], Awaitable[list[str]]]

CLIENT_PROBES: dict[str, Probe] = {"mobile": _phone_probe}
"""The kinds whose device is checked before the client registers (the device behind the tools must
be reachable); each probe returns what the device offers beyond its kind's capabilities."""


async def probe_device(device: DeviceClient) -> None:
    """Check, before registering, that the device behind the tools is reachable (:data:`CLIENT_PROBES`),
    and add what it offers to its capabilities; ConfigError (one line) when it is not."""
    probe = CLIENT_PROBES.get(device.platform)
    if probe is None or device.capabilities is None:
        return
    found = await probe(device.mcp_server_manager)
    device.capabilities += [item for item in found if item not in device.capabilities]


def display_problem(platform: str, environ: dict[str, str] | None = None, system: str | None = None) -> str:
    """Why a desktop device cannot run here ("" when it can): no X11 display, or the wrong OS."""
    env = os.environ if environ is None else environ
    system = system or sys.platform
    if platform == "windows":
        if system != "win32":
            return "--platform windows drives UI Automation and runs on Windows only; use linux-desktop here"
        return ""
    if not system.startswith("linux"):
        return f"--platform {platform} runs on Linux (X11) only"
    if not env.get("DISPLAY"):
        wayland = " (WAYLAND_DISPLAY alone is not enough: the desktop tools use X11/XWayland)"
        return (
            f"--platform {platform} needs a graphical session, but DISPLAY is not set"
            f"{wayland if env.get('WAYLAND_DISPLAY') else ''}; run it in your desktop session or under "
            "xvfb-run -a dbus-run-session -- starweave client ..."
        )
    return ""


def prepare_platform(
    platform: str, config: StarweaveConfig, options: ClientOptions | None = None
) -> tuple[DeviceKind, list[Closer]]:
    """The device kind of ``--platform``, its servers configured, and what to close when the client
    stops; ConfigError (one line) for a platform this client cannot serve here."""
    kind = device_kind(platform)
    options = options or ClientOptions(platform=kind.name)
    if kind.name != "mobile" and (options.serial or options.adb_path):
        raise ConfigError("--serial and --adb-path go with --platform mobile")
    prepare = CLIENT_PLATFORMS.get(kind.name)
    if prepare is None:
        ready = ", ".join(CLIENT_PLATFORMS)
        raise ConfigError(
            f"--platform {platform} ({kind.summary}) is not available in this client yet; use one of {ready}"
        )
    return kind, prepare(kind, config, options)


def _device_registry(kind: DeviceKind, config: StarweaveConfig, options: ClientOptions) -> MCPRegistry | None:
    """The in-process servers of the device: a phone's are built on that phone (passed, not looked up)."""
    if kind.name != "mobile":
        return None
    from starweave.client.mobile_device import phone_registry

    return phone_registry(config, options.serial, options.adb_path)


def build_device_client(options: ClientOptions) -> DeviceClient:
    """The DeviceClient with the configured MCP servers, confined to the workspace; it registers
    as its device kind, with that kind's capabilities (``starweave.device_kinds``)."""
    config = load_config(options.config_dir)
    kind, closers = prepare_platform(options.platform, config, options)
    workspace = resolve_workspace(options.workspace, config.system.shell.mode)
    place_workspace(config, options.config_dir, workspace)
    register_builtin_servers()
    servers = MCPServerManager(config.system.shell, registry=_device_registry(kind, config, options))
    computers = ComputerManager(config.mcp, servers, tool_timeout=tool_timeout(config.system))
    log.info("Platform detected/specified: %s", kind.name)
    return DeviceClient(
        servers,
        computers,
        client_id=options.client_id,
        platform=kind.name,
        capabilities=device_capabilities(kind),
        closers=closers,
    )


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
    except (ConfigError, ToolError) as exc:
        say(f"starweave client: {exc}")
        return EXIT_CONFIG
    try:
        # A required sandbox that is missing (or a phone that is not attached) is a start-up error,
        # not a failure of the first task.
        await ensure_sandbox(device.mcp_server_manager.shell)
        await probe_device(device)
    except (ConfigError, ToolError) as exc:
        await device.aclose()
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
        local_token=options.local_token,
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
