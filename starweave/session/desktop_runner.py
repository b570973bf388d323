"""``starweave run --agent host``: a HostAgent on this machine's desktop, handing subtasks to AppAgents.

The HostAgent lists the open windows (and the third-party LinuxAgent), picks one per subtask and
hands it to an AppAgent, which reads the window's controls, sees the set-of-mark screenshot and
clicks, types and reads until the subtask is done. The desktop UI servers (UICollector,
HostUIExecutor, AppUIExecutor, and the text editor's file API for mousepad) run in this process.
"""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.agent import AgentFactory, ContextNames
from starweave.agents.app.vision import VisualOptions
from starweave.agents.evaluation import EvaluationAgent
from starweave.agents.host import HostAgent
from starweave.commands.local import LocalCommandDispatcher
from starweave.config import AgentLLMConfig, StarweaveConfig
from starweave.config.models import default_mcp
from starweave.errors import ConfigError, DesktopError
from starweave.knowledge.retrieval import retriever_of
from starweave.llm.factory import create_llm
from starweave.session.annotation import SetOfMarkAnnotator
from starweave.session.console import ConsoleView
from starweave.session.evaluation import configure_screenshots, evaluation_configured
from starweave.session.follower import start_following
from starweave.session.logs import SessionLogs
from starweave.session.loop import Wiring, session_context
from starweave.session.runner import (
    RunOptions,
    check_agent_files,
    console_confirmer,
    evaluation_wanted,
    evaluator_wanted,
    load_options_config,
    make_evaluation_agent,
    make_linux_agent,
    model_overrides,
    run_options_session,
)
from starweave.session.session import LinuxSession
from starweave.session.timeouts import tool_timeout
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers.desktop import shared_ui_state

HOST_NAME = "HostAgent"
LINUX_AGENT = "LinuxAgent"
#: How long the first look at the accessibility tree may take before the desktop counts as unusable.
PROBE_SECONDS = 20.0
NEEDS_DESKTOP = "starweave run --agent host needs an X11 desktop (DISPLAY) with AT-SPI"


@dataclass
class DesktopOptions:
    """The HostAgent's own options next to the common ``run`` options."""

    #: Speculative multi-action: the AppAgent may plan several actions from one look at the window.
    multi_action: bool = False
    #: Also keep a desktop screenshot per AppAgent step.
    save_full_screen: bool = False
    #: VISUAL_MODE for both agents: the model sees the screenshots (it must be a vision model).
    visual: bool = False
    #: Follower mode: the title of the open window whose AppAgent follows the request's steps.
    follow_window: str = ""


def _load_desktop_config(options: RunOptions, visual: bool = False) -> tuple[StarweaveConfig, Path]:
    """The configuration of a HostAgent run: command-line model overrides (and ``visual``, i.e.
    ``--visual``) apply to both agents."""
    agent = model_overrides(options.provider, options.model, options.replay_file)
    if visual:
        agent["VISUAL_MODE"] = True
    config, workspace = load_options_config(
        options, {"APP_AGENT": agent, "HOST_AGENT": dict(agent)} if agent else {}
    )
    # An mcp.yaml written for the LinuxAgent alone still gets the shipped desktop servers.
    shipped = default_mcp()
    for name in (HOST_NAME, "AppAgent"):
        config.mcp.setdefault(name, shipped[name])
    blocks = [(config.host_agent, "HOST_AGENT"), (config.app_agent, "APP_AGENT")]
    if evaluator_wanted(options, config) and evaluation_configured(config):
        blocks.append((config.evaluation_agent, "EVALUATION_AGENT"))
    for block, name in blocks:
        check_model_block(block, name)
    return config, workspace


def check_model_block(block: AgentLLMConfig, name: str) -> None:
    """A run's model block is usable: VISUAL_MODE on a vision model, a replay file, existing files."""
    if block.visual_mode and block.api_type == "local":
        raise ConfigError(
            f"{name} has VISUAL_MODE: true, but the embedded model (API_TYPE local) reads text only; "
            "set VISUAL_MODE: false (or leave out --visual; the controls are listed as text) "
            "or use a vision model (API_TYPE openai, claude, ...)"
        )
    if block.api_type == "replay" and not block.replay_file:
        # --replay-file sets the run's agents' file; the evaluator's own block names its own.
        where = "set its REPLAY_FILE" if name == "EVALUATION_AGENT" else "pass --replay-file PATH"
        raise ConfigError(
            f"{name} uses the replay provider without a file: {where} "
            "(recorded answers, one JSON object per line)"
        )
    check_agent_files(block, name)


async def _check_desktop() -> None:
    """Fail early, with what to do, when there is no desktop whose accessibility tree we can read."""
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        raise ConfigError(
            f"{NEEDS_DESKTOP}; DISPLAY is not set. Run it in your desktop session, or under Xvfb "
            "(xvfb-run -a dbus-run-session -- starweave run --agent host ...)"
        )
    try:
        from starweave.tools.desktop import get_backend

        backend = get_backend()
    except (ImportError, DesktopError) as exc:
        raise ConfigError(
            f"{NEEDS_DESKTOP}; the desktop layer cannot start: {exc}. "
            "Install the 'desktop' extra (PyGObject, mss, Pillow) and gir1.2-atspi-2.0 / at-spi2-core"
        ) from None
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            await backend.list_windows()
    except TimeoutError:
        raise ConfigError(
            f"{NEEDS_DESKTOP}; the accessibility bus did not answer within {PROBE_SECONDS:g}s. "
            "Check that a D-Bus session bus runs (DBUS_SESSION_BUS_ADDRESS) and at-spi2-core is installed"
        ) from None
    except (ImportError, DesktopError, OSError, RuntimeError, ValueError) as exc:
        raise ConfigError(f"{NEEDS_DESKTOP}; listing the windows failed: {exc}") from None
    finally:
        aclose = getattr(backend, "aclose", None)
        if aclose is not None:
            await aclose()


def third_party_agents(config: StarweaveConfig) -> list[str]:
    """The third-party agents offered as targets: ENABLED_THIRD_PARTY_AGENTS, or the LinuxAgent."""
    section = config.third_party
    if "enabled_third_party_agents" in section.model_fields_set:
        return list(section.enabled_third_party_agents)
    return [LINUX_AGENT]


def make_host_agent(
    config: StarweaveConfig,
    llm: Any,
    app_llm: Any,
    view: ConsoleView,
    auto_approve: bool,
    desktop: DesktopOptions,
) -> HostAgent:
    """The HostAgent with its model(s), console confirmation, annotator and third-party targets."""

    agent = AgentFactory.create_agent(
        "host",
        name=HOST_NAME,
        llm=llm,
        app_llm=app_llm,
        view=view,
        confirmer=console_confirmer(view),
        auto_approve=auto_approve,
        is_visual=config.host_agent.visual_mode,
        app_visual=config.app_agent.visual_mode,
        visual=VisualOptions(
            concat_screenshot=config.system.concat_screenshot,
            include_last_screenshot=config.system.include_last_screenshot,
        ),
        retriever=retriever_of(config.system),
        guards=config.system.guards,
    )
    if not isinstance(agent, HostAgent):
        raise ConfigError(f"agent 'host' is registered as {type(agent).__name__}, not HostAgent")
    agent.action_sequence = desktop.multi_action
    agent.app_guards = config.system.guards
    agent.save_full_screen = desktop.save_full_screen
    agent.annotator = SetOfMarkAnnotator()
    names = third_party_agents(config)
    agent.third_party_agents = names
    for name in names:
        intro = config.third_party.third_party_agent_config.get(name)
        if intro is not None and intro.introduction:
            agent.third_party_introductions[name] = intro.introduction
    if LINUX_AGENT in names:
        # Pre-made so it gets the run's prompts, budget and confirmation like `--agent linux` does.
        linux = make_linux_agent(config, app_llm or llm, view, auto_approve)
        agent.appagent_dict[LINUX_AGENT] = linux
    return agent


async def run_host_task(
    options: RunOptions, view: ConsoleView | None = None, desktop: DesktopOptions | None = None
) -> dict[str, Any]:
    """Run one request with the HostAgent to completion; the result also goes to ``result.json``."""
    desktop = desktop or DesktopOptions()
    config, workspace = _load_desktop_config(options, desktop.visual)
    await _check_desktop()
    view = view or ConsoleView(quiet=options.quiet)

    async def set_up(stack: AsyncExitStack, logs: SessionLogs) -> Wiring:
        llm = create_llm(config.host_agent, config.system, prices=config.prices, on_call=logs.record_llm_call)
        stack.push_async_callback(llm.aclose)
        app_llm = None
        # One client when both agents use the same model: a replay file is one answer stream, and
        # the embedded model loads once.
        if config.app_agent != config.host_agent:
            app_llm = create_llm(
                config.app_agent, config.system, prices=config.prices, on_call=logs.record_llm_call
            )
            stack.push_async_callback(app_llm.aclose)
        # After the servers close: the desktop backend their UIState shares.
        stack.push_async_callback(shared_ui_state(config.system.shell).aclose)
        servers = MCPServerManager(config.system.shell)
        stack.push_async_callback(servers.aclose)
        computers = ComputerManager(config.mcp, servers, tool_timeout=tool_timeout(config.system))
        stack.push_async_callback(computers.aclose)
        dispatcher = LocalCommandDispatcher(CommandRouter(computers), agent_name=HOST_NAME)
        context = session_context(options.request, logs, dispatcher)
        agent = make_host_agent(config, llm, app_llm, view, options.auto_approve, desktop)
        if desktop.follow_window:
            await start_following(agent, context, desktop.follow_window)
        models = f"{config.host_agent.api_type} · {llm.model}"
        if app_llm is not None:
            models += f" (apps: {config.app_agent.api_type} · {app_llm.model})"
        speculative = ", speculative multi-action" if desktop.multi_action else ""
        header = {
            "agent": f"HostAgent → AppAgents{speculative}",
            "workspace": str(workspace),
            "model": models,
            "targets": "open windows" + "".join(f", {n}" for n in agent.third_party_agents),
            "logs": str(logs.path),
        }
        evaluator = run_evaluator(options, config, llm, stack, logs, view, header)
        return Wiring(agent, context, header, evaluator, evaluation_wanted(options, config))

    def result_of(session: LinuxSession, log_path: Path, duration: float) -> dict[str, Any]:
        return {**host_result(session, log_path, duration), "workspace": str(workspace)}

    return await run_options_session(options, config, workspace, view, set_up, result_of)


def run_evaluator(
    options: RunOptions,
    config: StarweaveConfig,
    llm: Any,
    stack: AsyncExitStack,
    logs: SessionLogs,
    view: ConsoleView,
    header: dict[str, str],
    run_visual: bool | None = None,
) -> EvaluationAgent | None:
    """The run's EvaluationAgent (``--evaluate`` / EVA_SESSION / EVA_ROUND), or None; on a vision
    model it also sees the run's screenshots (``run_visual``: whether the run's agent saw them; by
    default the HostAgent's VISUAL_MODE). Named in the console header."""
    if not evaluator_wanted(options, config):
        return None
    evaluator = make_evaluation_agent(config, llm, stack, logs, view)
    if evaluator is not None:
        visual = config.host_agent.visual_mode if run_visual is None else run_visual
        configure_screenshots(evaluator, config, run_visual=visual)
        shots = (
            ""
            if not evaluator.visual
            else (" + all screenshots" if evaluator.all_screenshots else " + first and last screenshots")
        )
        header["evaluation"] = f"{evaluator.llm.name} · {evaluator.llm.model}{shots}"
    return evaluator


def host_result(session: LinuxSession, log_path: Path, duration: float) -> dict[str, Any]:
    """The outcome of a HostAgent session, as written to ``result.json``."""
    context = session.context
    agent = session.agent
    subtasks = [
        {k: record.get(k) for k in ("agent_name", "application", "subtask", "status", "result")}
        for record in context.get(ContextNames.PREVIOUS_SUBTASKS) or []
    ]
    return {
        "task": session.task,
        "request": session.request,
        "agent": HOST_NAME,
        "status": "FINISH" if agent.status == "FINISH" else "FAIL",
        "result": str(context.get(ContextNames.ROUND_RESULT) or ""),
        "error": str(context.get(ContextNames.ERROR_MESSAGE) or ""),
        **session.summary(),
        "llm_calls": int(context.get(ContextNames.LLM_CALLS) or 0),
        "subtasks": subtasks,
        "duration": round(duration, 3),
        "log_path": str(log_path),
        "model": getattr(agent.llm, "model", ""),
        "provider": getattr(agent.llm, "name", ""),
    }
