"""The one session loop: every agent session (``starweave run`` for the LinuxAgent and the HostAgent,
the server's service sessions) runs its request here.

:func:`new_session` builds the :class:`LinuxSession` that runs a request under the configured
step cap; :func:`run_local_session` adds what a run on this machine needs around it: the log folder, the
console header, Ctrl+C (``interrupted`` result written, then re-raised) and ``result.json`` /
``output.md``. A runner supplies only what differs: how to set up its agent and context
(:data:`SetUp`) and the shape of its result (:data:`ResultOf`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.agent import BasicAgent, Context, ContextNames
from starweave.agents.evaluation import EvaluationAgent
from starweave.config import StarweaveConfig
from starweave.config.models import SystemConfig
from starweave.errors import ConfigError
from starweave.knowledge.saving import offer_experience
from starweave.llm.factory import secret_values
from starweave.session.console import ConsoleView
from starweave.session.customization import set_up_questions
from starweave.session.evaluation import evaluate_run
from starweave.session.logs import SessionLogs
from starweave.session.session import BaseRound, LinuxSession
from starweave.session.trajectory import trajectory_markdown
from starweave.tools.servers import register_builtin_servers, resolve_workspace

#: The status of a run stopped by the user (Ctrl+C); ``starweave run`` then exits with 130.
INTERRUPTED = "interrupted"
INTERRUPTED_ERROR = "interrupted by the user (Ctrl+C)"


@dataclass
class Wiring:
    """What a runner sets up for its session: the agent, its context, and the console's header."""

    agent: BasicAgent
    context: Context
    header: dict[str, str]
    #: Judges the finished run and/or its rounds, with the model clients still open.
    evaluator: EvaluationAgent | None = None
    #: Whether the whole session is judged (EVA_SESSION / --evaluate); EVA_ROUND alone judges rounds only.
    judge_session: bool = True
    #: What the workspace says about the finished run (``files`` it changed, names ``absent``),
    #: merged into the result; None: this kind of agent reports none.
    evidence: Callable[[], Awaitable[dict[str, Any] | None]] | None = None


#: Sets up the session's agent and context; closers go on the stack, model calls to the logs.
SetUp = Callable[[AsyncExitStack, SessionLogs], Awaitable[Wiring]]
#: The result of a session that ran: ``(session, log folder, seconds taken)`` → result dict.
ResultOf = Callable[[LinuxSession, Path, float], dict[str, Any]]


def new_session(
    task: str,
    context: Context,
    request: str,
    agent: BasicAgent,
    system: SystemConfig | None = None,
    *,
    max_step: int | None = None,
) -> LinuxSession:
    """The session that runs ``request`` with ``agent`` to the end of its round: at most MAX_STEP
    steps (``max_step`` when the agent has a cap of its own, as the ConstellationAgent does), with
    SLEEP_TIME between subtasks."""
    system = system or SystemConfig()
    cap = system.max_step if max_step is None else max_step
    return LinuxSession(BaseRound(task, context, request, agent, 0, cap, system.sleep_time))


async def run_local_session(
    config: StarweaveConfig,
    request: str,
    task: str,
    workspace: Path,
    view: ConsoleView,
    set_up: SetUp,
    result_of: ResultOf,
    save_experience: bool = False,
) -> dict[str, Any]:
    """Run one request on this machine to completion and return its result (also in ``result.json``).
    A FINISHed one-round run is then offered to the experience store (``save_experience``: without
    asking). Whatever is asked (questions, confirmations, follow-up requests, saving) is asked
    through ``view``; a view that may not ask (``ConsoleView(ask=False)``: ``--no-ask``, a batch
    plan) asks nothing, so such a run is one round.

    Cancelled (Ctrl+C: ``asyncio.run`` cancels this task), it still writes ``result.json`` and
    ``output.md`` with status ``interrupted`` and the steps so far, says where, and re-raises.
    """
    register_builtin_servers()
    logs = open_logs(config.system.log_dir, task, secrets_of(config))
    resolve_workspace(workspace, config.system.shell.mode)
    started = time.monotonic()
    session: LinuxSession | None = None

    def outcome() -> dict[str, Any]:
        duration = time.monotonic() - started
        if session is None:
            return _not_started_result(task, request, logs.path, duration, workspace)
        return result_of(session, logs.path, duration)

    async with AsyncExitStack() as stack:
        try:
            wiring = await set_up(stack, logs)
            set_up_questions(config.system, wiring.agent, wiring.context, view, logs.secrets)
            view.start(request, wiring.header)
            session = new_session(task, wiring.context, request, wiring.agent, config.system)
            rounds = add_rounds(
                session, config.system, view, wiring, logs, lambda r: _round_result(r, outcome())
            )
            await session.run()
        except asyncio.CancelledError:
            _report_interrupted(logs, config, request, view, outcome())
            raise
        result = outcome()
        if wiring.evidence is not None:
            result.update(await wiring.evidence() or {})
        _write_outcome(logs, config, request, result)
        view.finish(result)
        ran = len(session.rounds)
        # After result.json is written: verdicts are advisory and never change the result.
        await rounds.finish(ran)
        verdict = None
        if wiring.evaluator is not None and wiring.judge_session:
            verdict = await evaluate_run(wiring.evaluator, logs, result, view, wiring.agent.name)
        if ran > 1:
            _multi_round_not_saved(config.system, view, ran, save_experience)
        else:
            # The scrubbed result, as result.json holds it: no key typed in the request is kept.
            await offer_experience(
                config.system, logs.responses(), logs.scrubbed(result), view, save_experience, verdict
            )
    return result


def _multi_round_not_saved(system: SystemConfig, view: ConsoleView, ran: int, forced: bool) -> None:
    """Experience is one request and its steps: a session of several rounds (MAX_ROUND) is not saved."""
    if forced or system.rag_experience:
        view.console.print(
            f"Experience not saved: the session ran {ran} rounds; only a one-round run is saved.",
            soft_wrap=True,
        )


class RoundVerdicts:
    """EVA_ROUND: each round judged from its own steps. A round's verdict waits until the user gives
    a follow-up request or the session ends, so that a session of one round that is judged as a
    whole is not judged twice."""

    def __init__(
        self,
        evaluator: EvaluationAgent,
        logs: SessionLogs,
        view: ConsoleView,
        round_result: Callable[[BaseRound], dict[str, Any]],
        judge_session: bool,
    ) -> None:
        self.evaluator = evaluator
        self.logs = logs
        self.view = view
        self.round_result = round_result
        self.judge_session = judge_session
        self.pending: tuple[BaseRound, dict[str, Any]] | None = None

    async def ended(self, round_: BaseRound) -> None:
        """``round_`` ended: its outcome is taken now (a follow-up round resets the round's result)."""
        self.pending = (round_, self.round_result(round_))

    async def judge_pending(self) -> None:
        """Judge the round that ended last, if it has not been judged."""
        if self.pending is None:
            return
        round_, result = self.pending
        self.pending = None
        await evaluate_run(
            self.evaluator, self.logs, result, self.view, round_.agent.name, round_num=round_.id
        )

    async def finish(self, rounds_run: int) -> None:
        """The session ended after ``rounds_run`` rounds: judge the last one, unless it was the only
        one and the session's verdict judges the same steps."""
        if rounds_run == 1 and self.judge_session:
            self.pending = None
        await self.judge_pending()


class _NoRoundVerdicts:
    """Without EVA_ROUND (or an evaluator): nothing to judge per round."""

    async def judge_pending(self) -> None:
        """Nothing pending."""

    async def finish(self, rounds_run: int) -> None:
        """Nothing pending."""


def add_rounds(
    session: LinuxSession,
    system: SystemConfig,
    view: ConsoleView,
    wiring: Wiring,
    logs: SessionLogs,
    round_result: Callable[[BaseRound], dict[str, Any]],
) -> RoundVerdicts | _NoRoundVerdicts:
    """MAX_ROUND: follow-up requests asked on the terminal (a view that may not ask gives none: one
    round); EVA_ROUND (with an evaluator): each round judged from ``round_result(round)``. Returns
    what judges the rounds; its ``finish`` judges the last one once the session ended."""
    session.max_round = system.max_round
    evaluator = wiring.evaluator
    verdicts: RoundVerdicts | _NoRoundVerdicts = _NoRoundVerdicts()
    if system.eva_round and evaluator is not None:
        verdicts = RoundVerdicts(evaluator, logs, view, round_result, wiring.judge_session)
        session.round_end = verdicts.ended
    if session.max_round > 1:
        judge_previous = verdicts.judge_pending

        async def next_request(round_num: int, max_round: int) -> str | None:
            request = await view.next_request(round_num, max_round)
            if request:
                await judge_previous()  # another round follows: the one before it is judged now
            return request

        session.next_request = next_request
    return verdicts


def _round_result(round_: BaseRound, session_result: dict[str, Any]) -> dict[str, Any]:
    """The outcome of one round: the session's outcome so far, with the round's request and number."""
    return {**session_result, "request": round_.request, "round": round_.id}


def session_context(
    request: str, logs: SessionLogs, dispatcher: Any, tools: list[dict[str, Any]] | None = None
) -> Context:
    """The global context of a session: the request, the logs, the command dispatcher and, for an
    agent that is told its device's tools up front (the LinuxAgent), those tools."""
    context = Context()
    context.set(ContextNames.REQUEST, request)
    context.set(ContextNames.LOG_PATH, str(logs.path))
    context.set(ContextNames.LOGGER, logs.response_log)
    context.set(ContextNames.REQUEST_LOGGER, logs.request_log)
    if tools is not None:
        context.set(ContextNames.TOOL_INFO, tools)
    context.attach_command_dispatcher(dispatcher)
    return context


def _report_interrupted(
    logs: SessionLogs, config: StarweaveConfig, request: str, view: ConsoleView, result: dict[str, Any]
) -> None:
    """Ctrl+C: the run's outcome so far is written with status ``interrupted`` and shown."""
    result = {**result, "status": INTERRUPTED}
    result["error"] = result.get("error") or INTERRUPTED_ERROR
    _write_outcome(logs, config, request, result)
    view.interrupted(result)


def _write_outcome(logs: SessionLogs, config: StarweaveConfig, request: str, result: dict[str, Any]) -> None:
    """``result.json`` and (with LOG_TO_MARKDOWN) the ``output.md`` trajectory of a finished run."""
    logs.write_result(result)
    if config.system.log_to_markdown:
        logs.write_markdown(trajectory_markdown(request, logs.responses(), result))


def _not_started_result(
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


def open_logs(log_dir: str, task: str, secrets: list[str]) -> SessionLogs:
    """The run's log folder; a folder that cannot be created is a configuration error."""
    try:
        # Not resolved: a symlink the model planted in the path must be seen (starweave.log_folder).
        return SessionLogs(Path(os.path.abspath(Path(log_dir).expanduser())), task, secrets=secrets)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the log folder {Path(log_dir) / task}: {exc.strerror or exc}"
        ) from None


def secrets_of(config: StarweaveConfig) -> list[str]:
    """Every key a configured provider would use, from the config or the environment."""
    blocks = (config.host_agent, config.app_agent, config.backup_agent, config.evaluation_agent)
    found = {b.api_key.get_secret_value() for b in blocks} | {v for b in blocks for v in secret_values(b)}
    found |= {
        config.system.bing_api_key.get_secret_value(),
        config.system.rag_embedding_api_key.get_secret_value(),
    }
    return sorted(v for v in found if v)
