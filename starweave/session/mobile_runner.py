"""``starweave run --agent mobile``: the MobileAgent on an Android device, through the MobileAgent
entry of ``mcp.yaml`` (the MobileDataCollector and MobileExecutor servers, spec C §13.9).

``--serial`` and ``--adb-path`` reach the servers through :func:`apply_device_settings`, the one place
that knows how: the session's in-process (``local``) servers are bound to that device, a ``stdio``
server gets them in its environment. An ``http`` server runs on its own and takes them on its own
command line.
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
from starweave.tools.mobile import Adb, AdbError, find_adb
from starweave.tools.mobile.adb import check_serial
from starweave.tools.servers.mobile.state import ENV_ADB_PATH, ENV_ADB_SERIAL, bind_device

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


def device_environment(mobile: MobileOptions) -> dict[str, str]:
    """The environment keys that tell a mobile server process which device and adb to use."""
    values = {ENV_ADB_SERIAL: mobile.serial, ENV_ADB_PATH: mobile.adb_path}
    return {key: value for key, value in values.items() if value}


def check_device_options(mobile: MobileOptions) -> None:
    """``--serial`` is a serial and ``--adb-path`` an existing program (ConfigError otherwise)."""
    try:
        check_serial(mobile.serial or None)
    except AdbError as exc:
        raise ConfigError(f"--serial: {exc}") from None
    if mobile.adb_path and not Path(mobile.adb_path).expanduser().is_file():
        raise ConfigError(f"--adb-path {mobile.adb_path}: no such file; give the path of the adb program")


def apply_device_settings(config: StarweaveConfig, mobile: MobileOptions) -> None:
    """Point the MobileAgent's servers at ``--serial`` / ``--adb-path``: in-process (``local``) servers
    through :func:`bind_device` for this session, ``stdio`` servers through their ``env``. (An ``http``
    server runs on its own: ``starweave mcp serve mobile`` takes the device on its command line.)"""
    env = device_environment(mobile)
    if not env:
        return  # the servers' own choice: $STARWEAVE_ADB_PATH / $STARWEAVE_ADB_SERIAL, else auto-detected
    adb_path = str(Path(mobile.adb_path).expanduser()) if mobile.adb_path else None
    bind_device(config.system.shell, Adb(find_adb(adb_path), mobile.serial or None))
    for server_set in config.mcp.get(AGENT_NAME, {}).values():
        for server in [*server_set.data_collection, *server_set.action]:
            if server.type == "stdio":
                server.env.update(env)


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
    view = view or ConsoleView(quiet=options.quiet)
    agent_llm = config.agent_llm(AGENT_NAME)

    async def set_up(stack: AsyncExitStack, logs: SessionLogs) -> Wiring:
        llm = create_llm(agent_llm, config.system, prices=config.prices, on_call=logs.record_llm_call)
        stack.push_async_callback(llm.aclose)
        apply_device_settings(config, mobile)
        servers = MCPServerManager(config.system.shell)
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
