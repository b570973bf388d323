"""Judging a Galaxy session (``starweave galaxy --evaluate`` or EVA_SESSION: true).

The EvaluationAgent judges the constellation's outcome against the request: each task with its
device, status and result (from the session's ``constellation.json`` and ``result.json``), the
session's status and the ConstellationAgent's final answer. The verdict goes to
``evaluation.log`` in the session's log folder, in the same shape as a device run's (spec D §22),
and to the console. It is advisory: it never changes the session's result or the exit code, and
a model that gives no verdict is a one-line warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from starweave.agents.evaluation import EvaluationAgent
from starweave.config.models import StarweaveConfig
from starweave.errors import LLMError
from starweave.galaxy.reports.loading import read_json, task_dicts
from starweave.galaxy.reports.result import RESULT_FILE
from starweave.galaxy.session import GalaxyOutcome
from starweave.llm.base import LLMClient
from starweave.llm.factory import create_llm
from starweave.session.console import ConsoleView
from starweave.session.evaluation import EVALUATION_LOG, evaluation_configured, record_verdict
from starweave.session.logs import JsonLinesWriter
from starweave.text import flat_clip

AGENT = "ConstellationAgent (Galaxy: tasks on devices)"
#: Characters of one task's result in the judged text: the device's answer, not its whole log.
TASK_RESULT_CHARS = 400


def galaxy_evaluator(
    config: StarweaveConfig, planner: LLMClient
) -> tuple[EvaluationAgent | None, LLMClient | None]:
    """The Galaxy's EvaluationAgent: on the EVALUATION_AGENT model when the configuration sets one
    (returned too, for the caller to close), else on the ConstellationAgent's own client (with the
    replay provider its answer is the line after the planner's). Text only: a Galaxy run leaves
    no screenshots of its own. An evaluator model that cannot be set up is a warning: None."""
    if not evaluation_configured(config):
        return EvaluationAgent(llm=planner), None
    try:
        own = create_llm(config.evaluation_agent, config.system, prices=config.prices)
    except LLMError as exc:
        ConsoleView().evaluation_failed(f"EVALUATION_AGENT: {exc}")
        return None, None
    return EvaluationAgent(llm=own), own


def constellation_trajectory(log_path: Path) -> str:
    """The session's tasks as text: id, name, device, status, description, result and error."""
    constellation, _ = read_json(log_path / "constellation.json")
    result, _ = read_json(log_path / RESULT_FILE)
    finals: dict[str, Any] = {}
    for entry in ((result or {}).get("session_results") or {}).get("final_results") or []:
        if isinstance(entry, dict) and isinstance(entry.get("result"), dict):
            finals.update(entry["result"])
    tasks = task_dicts(constellation or {})
    if not tasks:
        return "(no tasks were planned)"
    lines = []
    for task in tasks:
        task_id = str(task.get("task_id", "?"))
        found = finals.get(task_id)
        final: dict[str, Any] = found if isinstance(found, dict) else {}
        device = final.get("device") or task.get("target_device_id") or "(none)"
        status = final.get("status") or task.get("status") or "?"
        lines.append(f"Task {task_id} '{task.get('name', '')}' on device {device} (status {status}):")
        if task.get("description"):
            lines.append(f"  description: {flat_clip(task['description'], TASK_RESULT_CHARS)}")
        answer = final.get("result", task.get("result"))
        if answer not in (None, ""):
            lines.append(f"  result: {flat_clip(answer, TASK_RESULT_CHARS)}")
        error = final.get("error") or task.get("error")
        if error:
            lines.append(f"  error: {flat_clip(error, TASK_RESULT_CHARS)}")
    return "\n".join(lines)


async def evaluate_galaxy(
    evaluator: EvaluationAgent,
    request: str,
    outcome: GalaxyOutcome,
    console: Console,
    secrets: list[str],
) -> dict[str, Any] | None:
    """Judge a finished Galaxy session; write ``evaluation.log`` in its log folder and show the
    verdict. Returns the record, or None (with a warning) when the model gave none."""
    status = f"{outcome.status} (ConstellationAgent {outcome.agent_status})"
    judging = evaluator.evaluate_text(
        request,
        constellation_trajectory(outcome.log_path),
        {"status": status, "result": outcome.answer or outcome.error, "agent": AGENT},
    )
    log = JsonLinesWriter(outcome.log_path / EVALUATION_LOG, secrets)
    return await record_verdict(judging, request, log, ConsoleView(console=console))
