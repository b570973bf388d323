"""Judging a finished run with the EvaluationAgent (``EVA_SESSION: true`` or ``--evaluate``).

Advisory: the verdict goes to ``logs/<task>/evaluation.log`` (one JSON line in the reference's
shape) and to the console after the run's summary. A model error leaves the run's result and
exit code as they were; it prints a one-line warning and writes no verdict.

Which model judges: the EVALUATION_AGENT block when the configuration sets it; otherwise the
run's own model client, so the embedded model is loaded once and, with the replay provider, the
evaluator's answer is simply the next line of the same ``--replay-file`` after the run's answers.
A judge on a vision model (VISUAL_MODE of that block, or of the run's model when that is used) also
sees the screenshots of the run's log folder (EVA_ALL_SCREENSHOTS: all, or the first and last).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from pydantic import ValidationError

from starweave.agents.evaluation import EvaluationAgent, EvaluationResponse, evaluation_record
from starweave.config import StarweaveConfig
from starweave.errors import LLMError
from starweave.session.console import ConsoleView
from starweave.session.logs import JsonLinesWriter, SessionLogs

EVALUATION_LOG = "evaluation.log"


def evaluation_configured(config: StarweaveConfig) -> bool:
    """Whether the configuration names a model of the evaluator's own (an EVALUATION_AGENT block)."""
    return bool(config.evaluation_agent.model_fields_set)


def configure_screenshots(evaluator: EvaluationAgent, config: StarweaveConfig, run_visual: bool) -> None:
    """Whether ``evaluator`` sees the run's screenshots: its own block's VISUAL_MODE when the
    configuration gives it a model, else the run's (``run_visual``); EVA_ALL_SCREENSHOTS says which."""
    evaluator.visual = config.evaluation_agent.visual_mode if evaluation_configured(config) else run_visual
    evaluator.all_screenshots = config.system.eva_all_screenshots


async def evaluate_run(
    evaluator: EvaluationAgent,
    logs: SessionLogs,
    result: dict[str, Any],
    view: ConsoleView,
    agent: str,
    *,
    round_num: int | None = None,
) -> dict[str, Any] | None:
    """Judge the run whose logs are ``logs`` and whose outcome is ``result``; write and show the
    verdict and return its record, or None (with a warning) when the model gave none. With
    ``round_num`` (EVA_ROUND) only that round's steps are judged: level "round", ``round`` set."""
    request = str(result.get("request", ""))
    outcome = {**result, "agent": agent}
    steps = logs.responses()
    extra: dict[str, Any] = {}
    shown: set[int] | None = None
    if round_num is not None:
        steps = [step for step in steps if step.get("round_num") == round_num]
        extra = {"level": "round", "round": round_num}
        # a vision judge sees that round's screenshots only (they are named by the session's step)
        shown = {int(step["step"]) for step in steps if str(step.get("step", "")).isdigit()}
    judging = evaluator.evaluate(request, steps, outcome, screenshots=logs.path, screenshot_steps=shown)
    log = JsonLinesWriter(logs.path / EVALUATION_LOG, logs.secrets, logs.folder)
    return await record_verdict(judging, request, log, view, extra)


async def record_verdict(
    judging: Awaitable[EvaluationResponse],
    request: str,
    log: JsonLinesWriter,
    view: ConsoleView,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Await the verdict, write its ``evaluation.log`` record (with ``extra`` fields) to ``log``
    and show it; returns the record, or None with a one-line warning when the model gave no
    valid verdict."""
    try:
        verdict = await judging
    except (LLMError, ValidationError) as exc:
        view.evaluation_failed(" ".join(str(exc).split())[:300])
        return None
    record = {**evaluation_record(verdict, request), **(extra or {})}
    log.write(record)
    view.evaluation(record)
    return record
