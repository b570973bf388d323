"""``starweave run``: wire configuration, model, MCP tools, logs and console into a LinuxSession.

The same LinuxAgent runs split over AIP later; here the dispatcher is the local one, so the MCP
servers run in this process (or as stdio/HTTP servers, as ``mcp.yaml`` says).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.agent import AgentFactory, Context, ContextNames
from starweave.agents.linux import LinuxAgent
from starweave.agents.linux.agent import DEFAULT_PROMPT_BUDGET_CHARS
from starweave.agents.linux.strategies import ANSWER_TOKENS
from starweave.commands.local import LocalCommandDispatcher
from starweave.config import AgentLLMConfig, StarweaveConfig, load_config
from starweave.errors import ConfigError
from starweave.llm.factory import create_llm, secret_values
from starweave.session.console import ConsoleView
from starweave.session.logs import SessionLogs, default_task_name
from starweave.session.session import LinuxSession
from starweave.session.trajectory import trajectory_markdown
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers import register_builtin_servers, resolve_workspace

AGENT_NAME = "LinuxAgent"


@dataclass
class RunOptions:
    """What the user asked for on the command line."""

    request: str
    workspace: Path | None = None
    max_steps: int | None = None
    provider: str | None = None
    model: str | None = None
    replay_file: Path | None = None
    auto_approve: bool = False
    config_dir: Path | None = None
    log_dir: Path | None = None
    task: str | None = None
    quiet: bool = False


def _overrides(options: RunOptions, workspace: Path) -> dict[str, Any]:
    agent: dict[str, Any] = {}
    if options.provider:
        agent["API_TYPE"] = options.provider
    if options.model:
        is_gguf = options.model.endswith(".gguf")
        agent["MODEL_PATH" if is_gguf else "API_MODEL"] = options.model
    if options.replay_file:
        agent["REPLAY_FILE"] = str(options.replay_file)
        agent.setdefault("API_TYPE", "replay")
    system: dict[str, Any] = {"SHELL": {"WORKSPACE": str(workspace)}}
    if options.max_steps is not None:
        system["MAX_STEP"] = options.max_steps
    if options.log_dir is not None:
        system["LOG_DIR"] = str(options.log_dir)
    return {"APP_AGENT": agent, "system": system} if agent else {"system": system}


def load_run_config(options: RunOptions) -> tuple[StarweaveConfig, Path]:
    """The effective configuration for this run and its workspace."""
    if not options.request.strip():
        raise ConfigError("the request is empty; say what the agent should do")
    mode = load_config(options.config_dir).system.shell.mode
    workspace = resolve_workspace(options.workspace, mode)
    config = load_config(options.config_dir, overrides=_overrides(options, workspace))
    if config.app_agent.api_type == "replay" and not config.app_agent.replay_file:
        raise ConfigError(
            "--provider replay needs --replay-file PATH (recorded answers, one JSON object per line)"
        )
    return config, workspace


def prompt_tools(infos: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The action tools as the prompter and the response schema see them."""
    return [
        {
            "name": info["tool_name"],
            "description": info.get("description") or "",
            "input_schema": info.get("input_schema") or {},
        }
        for info in infos
    ]


def secrets_of(config: StarweaveConfig) -> list[str]:
    """Every key a configured provider would use, from the config or the environment."""
    blocks = (config.host_agent, config.app_agent, config.backup_agent, config.evaluation_agent)
    found = {b.api_key.get_secret_value() for b in blocks} | {v for b in blocks for v in secret_values(b)}
    return sorted(v for v in found if v)


async def run_linux_task(options: RunOptions, view: ConsoleView | None = None) -> dict[str, Any]:
    """Run one request to completion and return the result (also written to ``result.json``)."""
    config, workspace = load_run_config(options)
    view = view or ConsoleView(quiet=options.quiet)
    register_builtin_servers()
    task = options.task or default_task_name()
    agent_llm = config.agent_llm(AGENT_NAME)
    logs = open_logs(config.system.log_dir, task, secrets_of(config))
    started = time.monotonic()
    async with AsyncExitStack() as stack:
        llm = create_llm(agent_llm, config.system, prices=config.prices, on_call=logs.record_llm_call)
        stack.push_async_callback(llm.aclose)
        servers = MCPServerManager(config.system.shell)
        stack.push_async_callback(servers.aclose)
        # A command may run for SHELL.MAX_TIMEOUT; the tool call around it must not give up first.
        tool_timeout = max(config.system.mcp_tool_timeout, config.system.shell.max_timeout + 10.0)
        computers = ComputerManager(config.mcp, servers, tool_timeout=tool_timeout)
        stack.push_async_callback(computers.aclose)
        computer = await computers.get_or_create(AGENT_NAME)
        dispatcher = LocalCommandDispatcher(CommandRouter(computers), agent_name=AGENT_NAME)
        context = linux_context(options.request, logs, prompt_tools(computer.action_tools()), dispatcher)
        agent = make_linux_agent(config, llm, view, options.auto_approve)
        agent.command_timeout = tool_timeout + 10.0
        view.start(
            options.request,
            {
                "workspace": str(workspace),
                "model": f"{agent_llm.api_type} · {llm.model}",
                "shell": f"{config.system.shell.mode} mode, sandbox {config.system.shell.sandbox}",
                "logs": str(logs.path),
            },
        )
        session = LinuxSession(task, context, options.request, agent, config.system.max_step)
        await session.run()
        result = session_result(
            task, options.request, session, agent, logs.path, time.monotonic() - started, workspace
        )
    logs.write_result(result)
    if config.system.log_to_markdown:
        logs.write_markdown(trajectory_markdown(options.request, logs.responses(), result))
    view.finish(result)
    return result


def linux_context(request: str, logs: SessionLogs, tools: list[dict[str, Any]], dispatcher: Any) -> Context:
    """The global context of a LinuxAgent session: request, logs, the device's tools, the dispatcher."""
    context = Context()
    context.set(ContextNames.REQUEST, request)
    context.set(ContextNames.LOG_PATH, str(logs.path))
    context.set(ContextNames.LOGGER, logs.response_log)
    context.set(ContextNames.REQUEST_LOGGER, logs.request_log)
    context.set(ContextNames.TOOL_INFO, tools)
    context.attach_command_dispatcher(dispatcher)
    return context


def open_logs(log_dir: str, task: str, secrets: list[str]) -> SessionLogs:
    """The run's log folder; a folder that cannot be created is a configuration error."""
    try:
        return SessionLogs(Path(log_dir).expanduser().resolve(), task, secrets=secrets)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the log folder {Path(log_dir) / task}: {exc.strerror or exc}"
        ) from None


def prompt_budget(agent_llm: AgentLLMConfig) -> int:
    """Characters of prompt the agent's model can take: the embedded model's window is small."""
    if agent_llm.api_type != "local":
        return DEFAULT_PROMPT_BUDGET_CHARS
    return max(4000, (agent_llm.n_ctx - ANSWER_TOKENS - 96) * 3)


def make_linux_agent(config: StarweaveConfig, llm: Any, view: ConsoleView, auto_approve: bool) -> LinuxAgent:
    prompts = config.third_party.third_party_agent_config.get(AGENT_NAME)
    main_prompt = prompts.appagent_prompt if prompts and prompts.appagent_prompt else "linux_agent.yaml"
    example_prompt = (
        prompts.appagent_example_prompt
        if prompts and prompts.appagent_example_prompt
        else "linux_agent_example.yaml"
    )
    agent = AgentFactory.create_agent(
        AGENT_NAME, name=AGENT_NAME, main_prompt=main_prompt, example_prompt=example_prompt
    )
    if not isinstance(agent, LinuxAgent):
        raise ConfigError(f"agent {AGENT_NAME!r} is registered as {type(agent).__name__}, not LinuxAgent")
    agent.llm = llm
    agent.view = view
    agent.auto_approve = auto_approve
    agent.history_keys = list(config.system.history_keys)
    agent.prompt_budget_chars = prompt_budget(config.agent_llm(AGENT_NAME))

    async def confirm(command: str, reason: str) -> bool:
        # Reading the terminal blocks; keep the event loop free while the user decides.
        return await asyncio.to_thread(view.confirm, command, reason)

    agent.confirmer = confirm
    return agent


def session_result(
    task: str,
    request: str,
    session: LinuxSession,
    agent: LinuxAgent,
    log_path: Path,
    duration: float,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """The outcome of a LinuxAgent session, as written to ``result.json`` and returned to a requester."""
    context = session.context
    status = "FINISH" if agent.status == "FINISH" else "FAIL"
    last = agent.memory.get_latest_item()
    answer = str(context.get(ContextNames.ROUND_RESULT) or "")
    if not answer and last is not None:
        answer = str(last.get_value("result") or "")
    result = {
        "task": task,
        "request": request,
        "status": status,
        "result": answer,
        "error": str(context.get(ContextNames.ERROR_MESSAGE) or ""),
        **session.summary(),
        "duration": round(duration, 3),
        "log_path": str(log_path),
        "model": getattr(agent.llm, "model", ""),
        "provider": getattr(agent.llm, "name", ""),
    }
    if workspace is not None:
        result["workspace"] = str(workspace)
    return result
