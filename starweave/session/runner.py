"""``starweave run``: wire configuration, model, MCP tools, logs and console into a LinuxSession.

The same LinuxAgent runs split over AIP later; here the dispatcher is the local one, so the MCP
servers run in this process (or as stdio/HTTP servers, as ``mcp.yaml`` says).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from starweave.agent import AgentFactory, ContextNames
from starweave.agents.evaluation import EvaluationAgent
from starweave.agents.linux import LinuxAgent
from starweave.agents.linux.agent import DEFAULT_COMMAND_TIMEOUT, DEFAULT_PROMPT_BUDGET_CHARS
from starweave.agents.linux.strategies import ANSWER_TOKENS
from starweave.commands.local import LocalCommandDispatcher
from starweave.config import AgentLLMConfig, StarweaveConfig, load_config
from starweave.config.loader import place_workspace
from starweave.config.workspace import workspace_problem
from starweave.errors import ConfigError, LLMError
from starweave.knowledge.retrieval import retriever_of
from starweave.llm.factory import create_llm
from starweave.session.console import ConsoleView
from starweave.session.evaluation import evaluation_configured
from starweave.session.logs import SessionLogs, default_task_name
from starweave.session.loop import ResultOf, SetUp, Wiring, run_local_session, session_context
from starweave.session.session import LinuxSession
from starweave.session.timeouts import command_timeout, tool_timeout
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.sandbox.choice import ensure_sandbox

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
    #: Judge the finished run with the EvaluationAgent (``--evaluate``; EVA_SESSION in system.yaml).
    evaluate: bool = False
    #: Save a FINISHed run as experience without asking (``--save-experience``).
    save_experience: bool = False


def model_overrides(provider: str | None, model: str | None, replay_file: Path | None) -> dict[str, Any]:
    """An agent's model block from the command line's --provider, --model and --replay-file."""
    agent: dict[str, Any] = {}
    if provider:
        agent["API_TYPE"] = provider
    if model:
        agent["MODEL_PATH" if model.endswith(".gguf") else "API_MODEL"] = model
    if replay_file:
        agent["REPLAY_FILE"] = str(replay_file.expanduser().resolve())
        agent.setdefault("API_TYPE", "replay")
    return agent


def load_options_config(options: RunOptions, agents: dict[str, Any]) -> tuple[StarweaveConfig, Path]:
    """The configuration of a ``run``, loaded once, with the agent blocks ``agents`` and the
    command line's step cap and log folder applied, and its workspace: ``--workspace``, else
    SHELL.WORKSPACE, else the current folder (checked, not created yet)."""
    if not options.request.strip():
        raise ConfigError("the request is empty; say what the agent should do")
    _check_task_name(options.task)
    system: dict[str, Any] = {}
    if options.max_steps is not None:
        system["MAX_STEP"] = options.max_steps
    if options.log_dir is not None:
        system["LOG_DIR"] = str(options.log_dir)
    config = load_config(options.config_dir, overrides={**agents, "system": system})
    shell = config.system.shell
    # Created only once everything is checked and the log folder exists: an error leaves nothing behind.
    workspace = _planned_workspace(options.workspace or _configured_workspace(shell.workspace), shell.mode)
    place_workspace(config, options.config_dir, workspace)
    return config, workspace


def _check_task_name(task: str | None) -> None:
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


def _planned_workspace(requested: Path | None, mode: str) -> Path:
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


def _load_run_config(options: RunOptions) -> tuple[StarweaveConfig, Path]:
    """The effective configuration of a LinuxAgent run and its workspace."""
    agent = model_overrides(options.provider, options.model, options.replay_file)
    config, workspace = load_options_config(options, {"APP_AGENT": agent} if agent else {})
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
    if evaluator_wanted(options, config) and evaluation_configured(config):
        check_agent_files(config.evaluation_agent, "EVALUATION_AGENT")
    return config, workspace


def _configured_workspace(value: str) -> Path | None:
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


async def run_linux_task(options: RunOptions, view: ConsoleView | None = None) -> dict[str, Any]:
    """Run one request with the LinuxAgent to completion and return the result (also written to
    ``result.json``; on Ctrl+C, with status ``interrupted``, see :func:`run_local_session`)."""
    config, workspace = _load_run_config(options)
    sandbox = await ensure_sandbox(config.system.shell)  # a required sandbox that is missing: exit 2 now
    view = view or ConsoleView(quiet=options.quiet)
    agent_llm = config.agent_llm(AGENT_NAME)

    async def set_up(stack: AsyncExitStack, logs: SessionLogs) -> Wiring:
        llm = create_llm(agent_llm, config.system, prices=config.prices, on_call=logs.record_llm_call)
        stack.push_async_callback(llm.aclose)
        servers = MCPServerManager(config.system.shell)
        stack.push_async_callback(servers.aclose)
        computers = ComputerManager(config.mcp, servers, tool_timeout=tool_timeout(config.system))
        stack.push_async_callback(computers.aclose)
        computer = await computers.get_or_create(AGENT_NAME)
        dispatcher = LocalCommandDispatcher(CommandRouter(computers), agent_name=AGENT_NAME)
        context = session_context(options.request, logs, dispatcher, prompt_tools(computer.action_tools()))
        agent = make_linux_agent(
            config, llm, view, options.auto_approve, command_timeout=command_timeout(config.system)
        )
        header = {
            "workspace": str(workspace),
            "model": f"{agent_llm.api_type} · {llm.model}",
            "shell": f"{config.system.shell.mode} mode, sandbox: {sandbox.describe()}",
            "logs": str(logs.path),
        }
        evaluator = None
        if evaluator_wanted(options, config):
            evaluator = make_evaluation_agent(config, llm, stack, logs, view)
        if evaluator is not None:
            header["evaluation"] = f"{evaluator.llm.name} · {evaluator.llm.model}"
        evidence = partial(agent.run_evidence, dispatcher)
        return Wiring(agent, context, header, evaluator, evaluation_wanted(options, config), evidence)

    def result_of(session: LinuxSession, log_path: Path, duration: float) -> dict[str, Any]:
        return session_result(session, log_path, duration, workspace)

    return await run_options_session(options, config, workspace, view, set_up, result_of)


async def run_options_session(
    options: RunOptions,
    config: StarweaveConfig,
    workspace: Path,
    view: ConsoleView,
    set_up: SetUp,
    result_of: ResultOf,
) -> dict[str, Any]:
    """:func:`run_local_session` of ``options``: its request, task name (else a timestamped one)
    and ``--save-experience``."""
    task = options.task or default_task_name()
    return await run_local_session(
        config,
        options.request,
        task,
        workspace,
        view,
        set_up,
        result_of,
        options.save_experience,
    )


def evaluation_wanted(options: RunOptions, config: StarweaveConfig) -> bool:
    """Whether the run is judged afterwards: ``--evaluate`` or EVA_SESSION."""
    return options.evaluate or config.system.eva_session


def evaluator_wanted(options: RunOptions, config: StarweaveConfig) -> bool:
    """Whether the run needs an EvaluationAgent: its session is judged, or its rounds (EVA_ROUND)."""
    return evaluation_wanted(options, config) or config.system.eva_round


def make_evaluation_agent(
    config: StarweaveConfig, run_llm: Any, stack: AsyncExitStack, logs: SessionLogs, view: ConsoleView
) -> EvaluationAgent | None:
    """The EvaluationAgent of a run: on the EVALUATION_AGENT model when the configuration sets one,
    else on the run's own client (one embedded model in memory; with ``--replay-file`` the
    evaluator's answer is the line after the run's answers). An evaluator model that cannot be
    set up is a warning, not a failed run: None."""
    if not evaluation_configured(config):
        return EvaluationAgent(llm=run_llm)
    try:
        llm = create_llm(
            config.evaluation_agent, config.system, prices=config.prices, on_call=logs.record_llm_call
        )
    except LLMError as exc:
        view.evaluation_failed(f"EVALUATION_AGENT: {exc}")
        return None
    stack.push_async_callback(llm.aclose)
    return EvaluationAgent(llm=llm)


def _prompt_budget(agent_llm: AgentLLMConfig) -> int:
    """Characters of prompt the agent's model can take: the embedded model's window is small."""
    if agent_llm.api_type != "local":
        return DEFAULT_PROMPT_BUDGET_CHARS
    return max(4000, (agent_llm.n_ctx - ANSWER_TOKENS - 96) * 3)


def console_confirmer(view: ConsoleView) -> Callable[[str, str], Awaitable[bool]]:
    """``await confirm(action, reason)``: the user's answer on the console view."""

    async def confirm(action: str, reason: str) -> bool:
        # Reading the terminal blocks; keep the event loop free while the user decides.
        return await asyncio.to_thread(view.confirm, action, reason)

    return confirm


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

    agent = AgentFactory.create_agent(
        AGENT_NAME,
        name=AGENT_NAME,
        main_prompt=main_prompt,
        example_prompt=example_prompt,
        llm=llm,
        view=view,
        confirmer=console_confirmer(view),
        auto_approve=auto_approve,
        history_keys=list(config.system.history_keys),
        prompt_budget_chars=_prompt_budget(config.agent_llm(AGENT_NAME)),
        command_timeout=command_timeout,
        retriever=retriever_of(config.system),
        guards=config.system.guards,
    )
    if not isinstance(agent, LinuxAgent):
        raise ConfigError(f"agent {AGENT_NAME!r} is registered as {type(agent).__name__}, not LinuxAgent")
    return agent


def session_result(
    session: LinuxSession, log_path: Path, duration: float, workspace: Path | None = None
) -> dict[str, Any]:
    """The outcome of a LinuxAgent session, as written to ``result.json`` and returned to a requester."""
    agent = session.agent
    context = session.context
    status = "FINISH" if agent.status == "FINISH" else "FAIL"
    last = agent.memory.get_latest_item()
    answer = str(context.get(ContextNames.ROUND_RESULT) or "")
    if not answer and last is not None:
        answer = str(last.get_value("result") or "")
    result = {
        "task": session.task,
        "request": session.request,
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
