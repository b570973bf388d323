"""GalaxyClient: what ``starweave galaxy`` runs (spec E §2.3).

It loads the Galaxy settings and the device list (or starts a local fleet), connects the devices
through their agent servers, creates the ConstellationAgent's model client once, and runs one
GalaxySession per request: a single request, or one after another in interactive mode. Devices
that fail to connect are reported by id with the reason; the run goes on with the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from starweave.agents.evaluation import EvaluationAgent
from starweave.config.loader import load_config
from starweave.config.models import StarweaveConfig
from starweave.config.workspace import workspace_problem
from starweave.errors import ConfigError, SessionError
from starweave.galaxy.devices import (
    ConstellationConfig,
    ConstellationDeviceManager,
    DeviceConfig,
    load_devices_config,
)
from starweave.galaxy.evaluation import evaluate_galaxy, galaxy_evaluator
from starweave.galaxy.events import EventBus
from starweave.galaxy.fleet import LOCAL_DEVICE_PREFIX, LocalFleet, start_local_fleet
from starweave.galaxy.session import GalaxyOutcome, GalaxySession
from starweave.galaxy.settings import GalaxyConfig, galaxy_dir, load_galaxy_config
from starweave.llm.base import LLMClient
from starweave.llm.factory import create_llm, secret_values
from starweave.session.evaluation import evaluation_configured
from starweave.session.runner import check_agent_files, model_overrides
from starweave.session.service import service_config
from starweave.threads import in_daemon_thread
from starweave.tools.sandbox.choice import ensure_sandbox

LOCAL_HEARTBEAT = 2.0
MAX_LOCAL_DEVICES = 32


@dataclass
class GalaxyOptions:
    """Everything ``starweave galaxy`` takes from its command line."""

    requests: list[str] = field(default_factory=list)
    interactive: bool = False
    devices_file: Path | None = None
    local: int = 0
    config_dir: Path | None = None
    provider: str | None = None
    model: str | None = None
    replay_file: Path | None = None
    device_provider: str | None = None
    device_replay_file: Path | None = None
    log_dir: Path = Path("logs/galaxy")
    workspace: Path = Path("galaxy_workspace")
    task_name: str | None = None
    live: bool | None = None  # None: when the console is a terminal
    yes: bool = False
    evaluate: bool = False  # judge each session with the EvaluationAgent (as EVA_SESSION: true)


def check_local_fleet(options: GalaxyOptions) -> None:
    """The --local devices' options, checked before anything starts: workspaces and model files."""
    if options.local > MAX_LOCAL_DEVICES:
        raise ConfigError(
            f"--local {options.local}: at most {MAX_LOCAL_DEVICES} local devices (each is a device client "
            "with its own tools in this process); for more, run device clients on other machines"
        )
    for index in range(1, options.local + 1):
        folder = (options.workspace / f"{LOCAL_DEVICE_PREFIX}{index}").expanduser().resolve()
        problem = workspace_problem(folder)
        if problem:
            raise ConfigError(
                f"--workspace {options.workspace}: refusing the device workspace {folder} ({problem}); "
                "name a project folder for the devices' workspaces"
            )
    provider = options.device_provider or options.provider
    if provider == "replay" and options.device_replay_file is None:
        raise ConfigError(
            "the --local devices use the replay provider too: pass --device-replay-file PATH with their "
            "recorded answers (or --device-provider NAME for another provider)"
        )
    if options.device_replay_file is not None and not options.device_replay_file.is_file():
        raise ConfigError(f"--device-replay-file {options.device_replay_file}: no such file")


def _make_log_root(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"--log-dir {folder}: cannot create the log folder: {exc.strerror or exc}"
        ) from None


def agent_overrides(provider: str | None, model: str | None, replay_file: Path | None) -> dict[str, Any]:
    """CONSTELLATION_AGENT overrides from the command line."""
    agent = model_overrides(provider, model, replay_file)
    return {"CONSTELLATION_AGENT": agent} if agent else {}


class GalaxyClient:
    """Connects the fleet once and runs sessions on it."""

    def __init__(self, options: GalaxyOptions, console: Console | None = None) -> None:
        self.options = options
        self.console = console or Console(highlight=False)
        self.bus = EventBus()
        self.base: StarweaveConfig = load_config(options.config_dir)
        self.galaxy: GalaxyConfig = load_galaxy_config(
            options.config_dir, agent_overrides(options.provider, options.model, options.replay_file)
        )
        agent = self.galaxy.constellation_agent
        if agent.api_type == "replay" and not agent.replay_file:
            raise ConfigError("--provider replay needs --replay-file PATH (the ConstellationAgent's answers)")
        check_agent_files(agent, "CONSTELLATION_AGENT")
        self.evaluate = options.evaluate or self.base.system.eva_session
        if self.evaluate and evaluation_configured(self.base):
            check_agent_files(self.base.evaluation_agent, "EVALUATION_AGENT")
        if options.local:
            check_local_fleet(options)
        devices = options.devices_file
        if devices is not None and devices.exists() and not devices.is_file():
            # A FIFO or a device (/dev/zero) would be read for ever.
            raise ConfigError(f"--devices {devices}: not a regular file; pass a devices.yaml file")
        _make_log_root(options.log_dir)
        self.llm: LLMClient | None = None
        self.evaluator: EvaluationAgent | None = None
        self._evaluator_llm: LLMClient | None = None
        self.fleet: LocalFleet | None = None
        self.device_manager: ConstellationDeviceManager | None = None
        self._connecting: asyncio.Task[dict[str, bool]] | None = None
        self.secrets = list(secret_values(self.galaxy.constellation_agent))
        self.sessions = 0

    def say(self, message: str) -> None:
        """One progress line for the user."""
        self.console.print(message)

    def _devices_config(self) -> ConstellationConfig:
        if self.options.devices_file is not None:
            return load_devices_config(self.options.devices_file)
        folder = galaxy_dir(self.options.config_dir)
        candidates = [folder / "constellation.yaml"] if folder else []
        candidates.append(Path(self.galaxy.constellation.device_info))
        for path in candidates:
            if path.is_file():
                return load_devices_config(path)
        raise ConfigError(
            "no devices: pass --devices config/galaxy/devices.yaml (see config/galaxy/devices.yaml in the "
            "repository for the format) or --local N to start N local Linux devices"
        )

    async def _start_fleet(self) -> ConstellationConfig:
        options = self.options
        provider = options.device_provider or options.provider
        device_config = service_config(
            options.config_dir,
            provider,
            options.model,
            options.device_replay_file,
            options.log_dir / "devices",
        )
        check_agent_files(device_config.app_agent)
        await ensure_sandbox(device_config.system.shell)  # before any device starts: exit 2 if missing
        shared = None
        agent = self.galaxy.constellation_agent
        device_agent = device_config.agent_llm("LinuxAgent")
        if agent.api_type == device_agent.api_type == "local" and agent.model_path == device_agent.model_path:
            shared = self.llm  # one embedded model serves the planner and the devices in turn
        self.say(f"Starting a local fleet of {options.local} Linux device(s) in {options.workspace}/ ...")
        self.fleet = await start_local_fleet(
            options.local,
            options.workspace,
            device_config,
            llm=shared,
            auto_approve=options.yes,
            heartbeat_interval=LOCAL_HEARTBEAT,
        )
        return ConstellationConfig(
            task_name="galaxy_local",
            heartbeat_interval=LOCAL_HEARTBEAT,
            reconnect_delay=1.0,
            devices=[DeviceConfig(**entry) for entry in self.fleet.device_entries()],
            api_key=self.fleet.api_key,
        )

    async def initialize(self) -> None:
        """Create the model client, start or load the fleet and connect every device."""
        settings = self.galaxy.constellation
        self.llm = create_llm(self.galaxy.constellation_agent, self.base.system, prices=self.base.prices)
        if self.evaluate:
            self.evaluator, self._evaluator_llm = galaxy_evaluator(self.base, self.llm)
        config = await self._start_fleet() if self.options.local else self._devices_config()
        if not config.devices:
            raise ConfigError("the device list is empty: add devices to devices.yaml or use --local N")
        self.device_manager = ConstellationDeviceManager(
            config.task_name,
            heartbeat_interval=config.heartbeat_interval,
            reconnect_delay=config.reconnect_delay,
            event_bus=self.bus,
            api_key=config.api_key,
            task_timeout=settings.task_timeout,
        )
        if config.api_key:
            self.secrets.append(config.api_key)
        self.say(f"Connecting {len(config.devices)} device(s): {', '.join(config.device_ids)}")
        # Connections are not cancelled at the deadline (that would strand them half-open): devices
        # still connecting keep trying in the background and join when they are ready.
        self._connecting = asyncio.create_task(self.device_manager.register_from_config(config))
        done, _ = await asyncio.wait({self._connecting}, timeout=settings.connect_timeout)
        if done:
            outcomes = self._connecting.result()
        else:
            online_now = set(self.device_manager.get_connected_devices())
            outcomes = {d: d in online_now for d in config.device_ids}
        for device_id, ok in outcomes.items():
            if not ok:
                reason = self.device_manager.last_error(device_id) or "not connected"
                self.say(f"[yellow]Device {device_id} is not connected: {reason}[/yellow]")
        online = self.device_manager.get_connected_devices()
        if not online:
            raise SessionError(
                f"none of the devices connected ({', '.join(config.device_ids)}); start their agent servers "
                "and device clients, check server_url in the devices file, or use --local N"
            )
        self.say(f"Devices online: {', '.join(online)}")

    def _task_name(self) -> str:
        self.sessions += 1
        base = self.options.task_name or time.strftime("request_%Y%m%d_%H%M%S")
        return base if self.sessions == 1 else f"{base}_{self.sessions}"

    async def process_request(self, request: str) -> GalaxyOutcome:
        """Run one request as a new session on the connected fleet."""
        if self.device_manager is None or self.llm is None:
            raise SessionError("GalaxyClient.initialize() must run before process_request()")
        live = self.options.live if self.options.live is not None else self.console.is_terminal
        session = GalaxySession(
            request,
            self._task_name(),
            self.options.log_dir,
            self.device_manager,
            self.llm,
            self.galaxy.constellation,
            self.bus,
            console=self.console,
            live=live,
            secrets=self.secrets,
            guards=self.base.system.guards,
        )
        self.say(f"[bold]Request:[/bold] {request}")
        try:
            outcome = await session.run()
        except asyncio.CancelledError:
            # The session wrote its reports with status "interrupted" on its way out.
            self.say(
                f"[yellow]Interrupted.[/yellow] Logs and report: {session.log_path}/ (output.md, result.json)"
            )
            raise
        colour = "green" if outcome.status == "completed" else "red"
        self.say(
            f"[{colour}]{outcome.status.upper()}[/{colour}] ({outcome.agent_status}) in "
            f"{outcome.execution_time:.1f} s, {outcome.task_count} task(s)"
            + (f": {outcome.error}" if outcome.error else "")
        )
        if outcome.answer:
            self.say(f"Answer: {escape(outcome.answer)}")
        self.say(f"Logs and report: {outcome.log_path}/ (output.md, result.json)")
        if self.evaluator is not None:  # advisory: the outcome (and the exit code) stay as they are
            await evaluate_galaxy(self.evaluator, request, outcome, self.console, self.secrets)
        return outcome

    async def interactive_mode(self, read: Callable[[str], str] = input) -> list[GalaxyOutcome]:
        """Requests one after another until quit/exit (or end of input)."""
        outcomes: list[GalaxyOutcome] = []
        self.say("Interactive Galaxy: type a request, or quit to stop.")
        while True:
            try:
                line = (await in_daemon_thread(read, f"galaxy[{len(outcomes) + 1}]> ")).strip()
            except EOFError:
                break
            if line.lower() in ("quit", "exit", "q"):
                break
            if line:
                outcomes.append(await self.process_request(line))
        return outcomes

    async def shutdown(self) -> None:
        """Disconnect the devices, stop a local fleet and close the model client."""
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
            await asyncio.wait({self._connecting}, timeout=5)
        if self.device_manager is not None:
            await self.device_manager.shutdown()
        if self.fleet is not None:
            await self.fleet.stop()
        for llm in (self.llm, self._evaluator_llm):
            if llm is not None:
                await llm.aclose()


async def run_galaxy(options: GalaxyOptions, console: Console | None = None) -> int:
    """The ``starweave galaxy`` command: 0 when every request completed, 1 otherwise."""
    client = GalaxyClient(options, console)
    try:
        await client.initialize()
        outcomes = [await client.process_request(request) for request in options.requests]
        if options.interactive:
            outcomes += await client.interactive_mode()
    finally:
        await client.shutdown()
    return 0 if outcomes and all(o.status == "completed" for o in outcomes) else 1
