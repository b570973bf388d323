"""Pieces of the ConstellationAgent's editing round that need no agent state.

- :func:`load_editing_tools`: the editing tools the model may call;
- :func:`retry_turns`: the two chat turns that give a refused edit back to the model (its answer,
  then the editor's reasons and the tasks as they now are), appended after the round's first
  prompt so the model server reuses that whole prefix;
- :func:`log_skipped_review`: the ``response.log`` line of a review answered without the model.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starweave.agent import Context, ContextNames
from starweave.commands import Command
from starweave.galaxy.agent.prompter import plan_text
from starweave.galaxy.agent.response import ConstellationAgentResponse
from starweave.galaxy.constellation import TaskConstellation

logger = logging.getLogger(__name__)


async def load_editing_tools(
    dispatcher: Any, tool_timeout: float, hidden: set[str]
) -> list[dict[str, Any]] | None:
    """The constellation server's tools (``list_tools``) without ``hidden``; None when it failed."""
    command = Command(tool_name="list_tools", parameters={"tool_type": "action"}, tool_type="action")
    results = await dispatcher.execute_commands([command], tool_timeout)
    tools = results[0].result if results and results[0].ok else None
    if not isinstance(tools, list):
        reason = results[0].error if results else "no result"
        logger.warning("list_tools failed on the constellation server: %s", reason)
        return None
    return [t for t in tools if isinstance(t, dict) and t.get("tool_name") not in hidden]


def retry_turns(
    answer: str, errors: list[str], repairs: list[str], current: TaskConstellation
) -> list[dict[str, Any]]:
    """The assistant turn (the refused answer) and the user turn asking for corrected edits."""
    lines = ["These edits were refused:", *(f"- {e}" for e in errors)]
    if repairs:
        lines += ["These were repaired and made:", *(f"- {r}" for r in repairs)]
    lines += [
        "Every other edit was made. The tasks are now:",
        plan_text(current),
        'Reply with only the corrected edits, or "action": [] when none is needed.',
    ]
    return [{"role": "assistant", "content": answer}, {"role": "user", "content": "\n".join(lines)}]


def log_skipped_review(
    context: Context,
    agent_name: str,
    parsed: ConstellationAgentResponse,
    reason: str,
    constellation: TaskConstellation,
    task_ids: list[str],
) -> None:
    """Write the ``response.log`` line of a review decided without a model call (review mode
    "fast"), when the session keeps that log."""
    writer = context.get(ContextNames.LOGGER)
    if writer is not None:
        request = str(context.get(ContextNames.REQUEST) or "")
        writer.write(skipped_review_record(agent_name, request, parsed, reason, constellation, task_ids))


def skipped_review_record(
    agent_name: str,
    request: str,
    parsed: ConstellationAgentResponse,
    reason: str,
    constellation: TaskConstellation,
    task_ids: list[str],
) -> dict[str, Any]:
    """The ``response.log`` line of a review decided without a model call (review mode "fast")."""
    return {
        "request": request,
        "agent_name": agent_name,
        "agent_type": "ConstellationAgent",
        "weaving_mode": "EDITING",
        "thought": parsed.thought,
        "status": parsed.status,
        "results": parsed.results,
        "llm_skipped": True,
        "skip_reason": reason,
        "on_task_id": list(task_ids),
        "action": [],
        "edit_errors": [],
        "constellation_before": constellation.to_dict(),
        "constellation_after": constellation.to_dict(),
        "cost": 0.0,
        "tokens": 0,
        "total_time": 0.0,
        "timestamp": time.time(),
    }
