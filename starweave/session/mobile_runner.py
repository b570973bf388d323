"""``starweave run --agent mobile``: the MobileAgent on an Android device, through the MobileAgent
entry of ``mcp.yaml`` (the MobileDataCollector and MobileExecutor servers, spec C §13.9).

``--serial`` and ``--adb-path`` reach the servers through :func:`apply_device_settings`, the one place
that knows how: the session's in-process (``local``) servers are built on that device's state (a
registry passed to the MCP manager). An ``http`` server runs on its own and drives the phone given on
its own command line, so the two options are refused with one; ``stdio`` is refused for these servers
(two processes could not share the control list ``click_control`` reads). Before the first step,
:func:`probe_phone` checks that adb sees exactly the phone meant and that it is usable.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.agent import AgentFactory
from starweave.agents.mobile import MobileAgent
from starweave.agents.mobile.tools import AGENT_NAME
from starweave.commands.local import LocalCommandDispatcher
from starweave.config import StarweaveConfig
from starweave.config.models import McpServerConfig
from starweave.errors import ConfigError
from starweave.llm.factory import create_llm
from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import check_model_block, run_evaluator
from starweave.session.evaluation import evaluation_configured
from starweave.session.logs import SessionLogs
from starweave.session.loop import Wiring, session_context
from starweave.session.runner import (
    RunOptions,
    console_confirmer,
    evaluation_wanted,
    evaluator_wanted,
    load_options_config,
    model_overrides,
    run_options_session,
    session_result,
)
from starweave.session.session import LinuxSession
from starweave.session.timeouts import tool_timeout
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.mobile import Adb, AdbError
from starweave.tools.mobile.adb import check_serial
from starweave.tools.servers.mobile import (
    MOBILE_NAMESPACES,
    MobileRegistry,
    device_adb,
    mobile_state,
)

NO_SERVERS = (
    "no MCP servers for MobileAgent: add a 'MobileAgent' entry to mcp.yaml with the MobileDataCollector "
    "(data_collection) and MobileExecutor (action) servers"
)


@dataclass
class MobileOptions:
    """The MobileAgent's own options next to the common ``run`` options."""

    #: The device's adb serial (``adb devices``); "" for the only attached device.
    serial: str = ""
    #: The adb program to use; "" for the servers' own detection.
    adb_path: str = ""
    #: VISUAL_MODE: the screenshots go to the model (it must be a vision model).
    visual: bool = False


ADB_HINT = "enable USB debugging on the phone and check `adb devices`"
#: What to do about a phone ``adb devices`` lists in a state other than ``device``.
STATE_HINTS = {
    "unauthorized": "accept the USB-debugging prompt on the phone",
    "offline": "reconnect the phone (or restart adb: adb kill-server)",
}


async def probe_phone(adb: Adb, what: str) -> None:
    """Check that adb runs and sees the one usable phone meant (``adb.serial``, else the only one
    attached); ConfigError (one line, starting with ``what``) naming the problem and its remedy."""
    try:
        attached = await adb.devices()
    except AdbError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    listed = ", ".join(f"{serial} ({state})" for serial, state in attached) or "none"
    meant = [(serial, state) for serial, state in attached if serial == adb.serial or not adb.serial]
    if adb.serial and not meant:
        raise ConfigError(f"{what}: adb does not see the phone {adb.serial} (attached: {listed}); {ADB_HINT}")
    if not adb.serial and len(meant) != 1:
        problem = "no phone is attached" if not meant else f"several phones are attached ({listed})"
        raise ConfigError(f"{what}: {problem}; pass --serial SERIAL ({ADB_HINT})")
    serial, state = meant[0]
    if state != "device":
        hint = STATE_HINTS.get(state, ADB_HINT)
        raise ConfigError(f"{what}: the phone {serial} is {state!r} in `adb devices`; {hint}")


def check_device_options(mobile: MobileOptions) -> None:
    """``--serial`` is a serial and ``--adb-path`` an existing program (ConfigError otherwise)."""
    try:
        check_serial(mobile.serial or None)
    except AdbError as exc:
        raise ConfigError(f"--serial: {exc}") from None
    if mobile.adb_path and not Path(mobile.adb_path).expanduser().is_file():
        raise ConfigError(f"--adb-path {mobile.adb_path}: no such file; give the path of the adb program")


def _mobile_servers(config: StarweaveConfig) -> list[McpServerConfig]:
    """The MobileAgent entry's MobileDataCollector / MobileExecutor servers."""
    return [
        server
        for server_set in config.mcp.get(AGENT_NAME, {}).values()
        for server in [*server_set.data_collection, *server_set.action]
        if server.namespace in MOBILE_NAMESPACES
    ]


def apply_device_settings(config: StarweaveConfig, mobile: MobileOptions) -> MobileRegistry | None:
    """The registry whose in-process mobile servers drive the phone of ``--serial`` / ``--adb-path``
    (else $STARWEAVE_ADB_*, else the only attached one); None when the MobileAgent entry has no
    ``local`` mobile server. ConfigError (one line) for a ``stdio`` mobile server, and for the two
    options with an ``http`` one (that server drives the phone given on its own command line)."""
    servers = _mobile_servers(config)
    for server in servers:
        if server.type == "stdio":
            raise ConfigError(
                f"mcp.yaml: the MobileAgent's {server.namespace} cannot be a stdio server (the two "
                "mobile servers must share one control list); use type: local, or http with "
                "`starweave mcp serve mobile`"
            )
        if server.type == "http" and (mobile.serial or mobile.adb_path):
            raise ConfigError(
                f"--serial/--adb-path cannot reach the http server {server.namespace} at "
                f"{server.host}:{server.port}: it drives the phone given on its own command line "
                "(starweave mcp serve mobile --serial ...); drop the options or use type: local"
            )
    if not any(server.type == "local" for server in servers):
        return None
    return device_registry(mobile)


def device_registry(mobile: MobileOptions) -> MobileRegistry:
    """A registry whose in-process mobile servers drive the phone of ``--serial`` / ``--adb-path``
    (else $STARWEAVE_ADB_*, else the only attached one)."""
    return MobileRegistry(mobile_state(device_adb(mobile.serial, mobile.adb_path)))


def _load_mobile_config(options: RunOptions, visual: bool) -> tuple[StarweaveConfig, Path]:
    """The configuration of a MobileAgent run; its model is APP_AGENT's (a third-party agent's)."""
    agent = model_overrides(options.provider, options.model, options.replay_file)
    if visual:
        agent["VISUAL_MODE"] = True
    config, workspace = load_options_config(options, {"APP_AGENT": agent} if agent else {})
    check_model_block(config.agent_llm(AGENT_NAME), "APP_AGENT")
    if evaluator_wanted(options, config) and evaluation_configured(config):
        check_model_block(config.evaluation_agent, "EVALUATION_AGENT")
    if config.mcp_servers(AGENT_NAME) is None:
        raise ConfigError(NO_SERVERS)
    return config, workspace


def make_mobile_agent(
    config: StarweaveConfig, llm: Any, view: ConsoleView, auto_approve: bool
) -> MobileAgent:
    """The MobileAgent of ``config``, confirming sensitive actions on the console."""
    agent = AgentFactory.create_agent(
        AGENT_NAME,
        name=AGENT_NAME,
        llm=llm,
        view=view,
        confirmer=console_confirmer(view),
        auto_approve=auto_approve,
        is_visual=config.agent_llm(AGENT_NAME).visual_mode,
        guards=config.system.guards,
    )
    if not isinstance(agent, MobileAgent):
        raise ConfigError(f"agent {AGENT_NAME!r} is registered as {type(agent).__name__}, not MobileAgent")
    return agent


async def run_mobile_task(
    options: RunOptions, view: ConsoleView | None = None, mobile: MobileOptions | None = None
) -> dict[str, Any]:
    """Run one request with the MobileAgent to completion; the result also goes to ``result.json``."""
    mobile = mobile or MobileOptions()
    check_device_options(mobile)
    config, workspace = _load_mobile_config(options, mobile.visual)
    registry = apply_device_settings(config, mobile)
    if registry is not None:  # an http server's phone is checked by that server's own process
        await probe_phone(registry.state.adb, "--agent mobile")
    view = view or ConsoleView(quiet=options.quiet)
    agent_llm = config.agent_llm(AGENT_NAME)

    async def set_up(stack: AsyncExitStack, logs: SessionLogs) -> Wiring:
        llm = create_llm(agent_llm, config.system, prices=config.prices, on_call=logs.record_llm_call)
        stack.push_async_callback(llm.aclose)
        servers = MCPServerManager(config.system.shell, registry=registry)
        stack.push_async_callback(servers.aclose)
        computers = ComputerManager(config.mcp, servers, tool_timeout=tool_timeout(config.system))
        stack.push_async_callback(computers.aclose)
        await computers.get_or_create(AGENT_NAME)  # the servers start (or fail) before the first step
        dispatcher = LocalCommandDispatcher(CommandRouter(computers), agent_name=AGENT_NAME)
        context = session_context(options.request, logs, dispatcher)
        agent = make_mobile_agent(config, llm, view, options.auto_approve)
        header = {
            "agent": "MobileAgent" + (" (visual)" if agent.is_visual else ""),
            "device": mobile.serial or "the attached device",
            "model": f"{agent_llm.api_type} · {llm.model}",
            "logs": str(logs.path),
        }
        evaluator = run_evaluator(options, config, llm, stack, logs, view, header, agent.is_visual)
        return Wiring(agent, context, header, evaluator, evaluation_wanted(options, config))

    def result_of(session: LinuxSession, log_path: Path, duration: float) -> dict[str, Any]:
        return {**session_result(session, log_path, duration, workspace), "agent": AGENT_NAME}

    return await run_options_session(options, config, workspace, view, set_up, result_of)
