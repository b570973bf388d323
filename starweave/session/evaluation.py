"""Judging a finished run with the EvaluationAgent (``EVA_SESSION: true`` or ``--evaluate``).

Advisory: the verdict goes to ``logs/<task>/evaluation.log`` (one JSON line in the reference's
shape) and to the console after the run's summary. A model error leaves the run's result and
exit code as they were; it prints a one-line warning and writes no verdict.

Which model judges: the EVALUATION_AGENT block when the configuration sets it; otherwise the
run's own model client, so the embedded model is loaded once and, with the replay provider, the
evaluator's answer is simply the next line of the same ``--replay-file`` after the run's answers.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from starweave.agents.evaluation import EvaluationAgent, evaluation_record
from starweave.config import StarweaveConfig
from starweave.errors import LLMError
from starweave.session.console import ConsoleView
from starweave.session.logs import JsonLinesWriter, SessionLogs

EVALUATION_LOG = "evaluation.log"


def evaluation_configured(config: StarweaveConfig) -> bool:
    """Whether the configuration names a model of the evaluator's own (an EVALUATION_AGENT block)."""
    return bool(config.evaluation_agent.model_fields_set)


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
    if round_num is not None:
        steps = [step for step in steps if step.get("round_num") == round_num]
    try:
        verdict = await evaluator.evaluate(request, steps, outcome)
    except (LLMError, ValidationError) as exc:
        view.evaluation_failed(" ".join(str(exc).split())[:300])
        return None
    record = evaluation_record(verdict, request)
    if round_num is not None:
        record.update(level="round", round=round_num)
    JsonLinesWriter(logs.path / EVALUATION_LOG, logs.secrets, logs.folder).write(record)
    view.evaluation(record)
    return record
