"""``starweave run``: wire configuration, model, MCP tools, logs and console into a LinuxSession.

The same LinuxAgent runs split over AIP later; here the dispatcher is the local one, so the MCP
servers run in this process (or as stdio/HTTP servers, as ``mcp.yaml`` says).
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.agent import AgentFactory, Context, ContextNames
from starweave.agents.linux import LinuxAgent
from starweave.agents.linux.agent import DEFAULT_COMMAND_TIMEOUT, DEFAULT_PROMPT_BUDGET_CHARS
from starweave.agents.linux.strategies import ANSWER_TOKENS
from starweave.commands.local import LocalCommandDispatcher
from starweave.config import AgentLLMConfig, StarweaveConfig, load_config
from starweave.config.workspace import workspace_problem
from starweave.errors import ConfigError
from starweave.llm.factory import create_llm, secret_values
from starweave.session.console import ConsoleView
from starweave.session.logs import SessionLogs, default_task_name
from starweave.session.session import LinuxSession
from starweave.session.trajectory import trajectory_markdown
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers import register_builtin_servers, resolve_workspace
from starweave.tools.servers.shell.sandbox import ensure_sandbox

AGENT_NAME = "LinuxAgent"
#: The status of a run stopped by the user (Ctrl+C); ``starweave run`` then exits with 130.
INTERRUPTED = "interrupted"
INTERRUPTED_ERROR = "interrupted by the user (Ctrl+C)"


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


def check_task_name(task: str | None) -> None:
    """``--task`` names one folder inside the log folder: no path, no parent, nothing hidden."""
    if task is None:
        return
    if not task.strip() or task.strip(".") == "" or any(c in task for c in "/\\\0") or task.startswith("."):
        raise ConfigError(
            f"--task {task!r} is not a folder name; use letters, digits, '-' and '_' (no '/', no leading '.')"
        )


def check_agent_files(agent: AgentLLMConfig, block: str = "APP_AGENT") -> None:
    """The files a model block names exist, checked at start: the embedded model's MODEL_PATH
    (``--model X.gguf``) and the replay provider's REPLAY_FILE (``--replay-file``)."""
    if agent.api_type == "local" and agent.model_path:
        path = Path(agent.model_path).expanduser()
        if not path.is_file():
            what = "no such file" if not path.exists() else "not a file"
            raise ConfigError(
                f"{block}.MODEL_PATH (--model) {agent.model_path}: {what}; give the path of a GGUF model "
                "file, or leave it out to use the packaged model"
            )
    replay = Path(agent.replay_file).expanduser() if agent.replay_file else None
    if agent.api_type == "replay" and replay is not None and not replay.is_file():
        raise ConfigError(
            f"{block}.REPLAY_FILE (--replay-file) {agent.replay_file}: no such file; give a file of "
            "recorded answers, one JSON object per line"
        )


def planned_workspace(requested: Path | None, mode: str) -> Path:
    """The workspace folder a run will use, checked but not created yet (see ``resolve_workspace``)."""
    folder = (requested or Path.cwd()).expanduser().resolve()
    problem = None if mode == "unrestricted" else workspace_problem(folder)
    if problem:
        raise ConfigError(
            f"refusing to use {folder} as the workspace ({problem}): every file in it would be writable "
            "by the agent. Pass --workspace with a project folder (it is created if missing)"
        )
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"workspace {folder} exists and is not a folder")
    return folder


def load_run_config(options: RunOptions) -> tuple[StarweaveConfig, Path]:
    """The effective configuration for this run and its workspace.

    The workspace is ``--workspace``, else SHELL.WORKSPACE from the configuration, else the current
    folder."""
    if not options.request.strip():
        raise ConfigError("the request is empty; say what the agent should do")
    check_task_name(options.task)
    shell = load_config(options.config_dir).system.shell
    # Created only once everything is checked and the log folder exists: an error leaves nothing behind.
    workspace = planned_workspace(options.workspace or configured_workspace(shell.workspace), shell.mode)
    config = load_config(options.config_dir, overrides=_overrides(options, workspace))
    if config.app_agent.api_type == "replay" and not config.app_agent.replay_file:
        raise ConfigError(
            "--provider replay needs --replay-file PATH (recorded answers, one JSON object per line)"
        )
    if options.model and config.app_agent.api_type == "local" and not options.model.endswith(".gguf"):
        raise ConfigError(
            f"--model {options.model}: the embedded model (provider local) takes the path of a .gguf file; "
            "for a named model pass --provider too (openai, ollama, claude, ...)"
        )
    check_agent_files(config.app_agent)
    return config, workspace


def configured_workspace(value: str) -> Path | None:
    """SHELL.WORKSPACE as a folder, or None when it is not set."""
    return Path(value).expanduser() if value else None


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
    """Run one request to completion and return the result (also written to ``result.json``).

    Cancelled (Ctrl+C: ``asyncio.run`` cancels this task), it still writes ``result.json`` and
    ``output.md`` with status ``interrupted`` and the steps so far, says where, and re-raises.
    """
    config, workspace = load_run_config(options)
    sandbox = await ensure_sandbox(config.system.shell)  # a required sandbox that is missing: exit 2 now
    view = view or ConsoleView(quiet=options.quiet)
    register_builtin_servers()
    task = options.task or default_task_name()
    agent_llm = config.agent_llm(AGENT_NAME)
    logs = open_logs(config.system.log_dir, task, secrets_of(config))
    resolve_workspace(workspace, config.system.shell.mode)
    started = time.monotonic()
    session: LinuxSession | None = None
    agent: LinuxAgent | None = None

    def outcome() -> dict[str, Any]:
        if session is None or agent is None:
            return not_started_result(task, options.request, logs.path, time.monotonic() - started, workspace)
        return session_result(
            task, options.request, session, agent, logs.path, time.monotonic() - started, workspace
        )

    async with AsyncExitStack() as stack:
        try:
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
            agent = make_linux_agent(
                config, llm, view, options.auto_approve, command_timeout=tool_timeout + 10.0
            )
            view.start(
                options.request,
                {
                    "workspace": str(workspace),
                    "model": f"{agent_llm.api_type} · {llm.model}",
                    "shell": f"{config.system.shell.mode} mode, sandbox: {sandbox.describe()}",
                    "logs": str(logs.path),
                },
            )
            session = LinuxSession(
                task,
                context,
                options.request,
                agent,
                config.system.max_step,
                sleep_time=config.system.sleep_time,
            )
            await session.run()
        except asyncio.CancelledError:
            report_interrupted(logs, config, options.request, view, outcome())
            raise
        result = outcome()
    write_outcome(logs, config, options.request, result)
    view.finish(result)
    return result


def report_interrupted(
    logs: SessionLogs, config: StarweaveConfig, request: str, view: ConsoleView, result: dict[str, Any]
) -> None:
    """Ctrl+C: the run's outcome so far is written with status ``interrupted`` and shown."""
    result = {**result, "status": INTERRUPTED}
    result["error"] = result.get("error") or INTERRUPTED_ERROR
    write_outcome(logs, config, request, result)
    view.interrupted(result)


def write_outcome(logs: SessionLogs, config: StarweaveConfig, request: str, result: dict[str, Any]) -> None:
    """``result.json`` and (with LOG_TO_MARKDOWN) the ``output.md`` trajectory of a finished run."""
    logs.write_result(result)
    if config.system.log_to_markdown:
        logs.write_markdown(trajectory_markdown(request, logs.responses(), result))


def not_started_result(
    task: str, request: str, log_path: Path, duration: float, workspace: Path | None = None
) -> dict[str, Any]:
    """The result of a run stopped before its first step (its tools or model were still starting)."""
    result: dict[str, Any] = {
        "task": task,
        "request": request,
        "status": "FAIL",
        "result": "",
        "error": "stopped before the first step",
        "steps": 0,
        "cost": 0.0,
        "tokens": 0,
        "duration": round(duration, 3),
        "log_path": str(log_path),
    }
    if workspace is not None:
        result["workspace"] = str(workspace)
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
        # Not resolved: a symlink the model planted in the path must be seen (starweave.log_folder).
        return SessionLogs(Path(os.path.abspath(Path(log_dir).expanduser())), task, secrets=secrets)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the log folder {Path(log_dir) / task}: {exc.strerror or exc}"
        ) from None


def prompt_budget(agent_llm: AgentLLMConfig) -> int:
    """Characters of prompt the agent's model can take: the embedded model's window is small."""
    if agent_llm.api_type != "local":
        return DEFAULT_PROMPT_BUDGET_CHARS
    return max(4000, (agent_llm.n_ctx - ANSWER_TOKENS - 96) * 3)


def make_linux_agent(
    config: StarweaveConfig,
    llm: Any,
    view: ConsoleView,
    auto_approve: bool,
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
) -> LinuxAgent:
    """The LinuxAgent of ``config`` with every collaborator given to its constructor."""
    prompts = config.third_party.third_party_agent_config.get(AGENT_NAME)
    main_prompt = prompts.appagent_prompt if prompts and prompts.appagent_prompt else "linux_agent.yaml"
    example_prompt = (
        prompts.appagent_example_prompt
        if prompts and prompts.appagent_example_prompt
        else "linux_agent_example.yaml"
    )

    async def confirm(command: str, reason: str) -> bool:
        # Reading the terminal blocks; keep the event loop free while the user decides.
        return await asyncio.to_thread(view.confirm, command, reason)

    agent = AgentFactory.create_agent(
        AGENT_NAME,
        name=AGENT_NAME,
        main_prompt=main_prompt,
        example_prompt=example_prompt,
        llm=llm,
        view=view,
        confirmer=confirm,
        auto_approve=auto_approve,
        history_keys=list(config.system.history_keys),
        prompt_budget_chars=prompt_budget(config.agent_llm(AGENT_NAME)),
        command_timeout=command_timeout,
    )
    if not isinstance(agent, LinuxAgent):
        raise ConfigError(f"agent {AGENT_NAME!r} is registered as {type(agent).__name__}, not LinuxAgent")
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
