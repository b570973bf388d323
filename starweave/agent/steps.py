"""What every agent's LLM-interaction and memory-update strategies do alike.

The LinuxAgent, HostAgent, AppAgent and ConstellationAgent build different prompts and parse
different answers, but they log the prompt, report the model call and book the step's cost the same
way; these functions are that shared part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starweave.agent.context import Context, ContextNames
from starweave.agent.processing import ProcessingContext, ProcessingPhase, ProcessingResult

if TYPE_CHECKING:
    from starweave.agent.basic import BasicAgent
    from starweave.agent.memory import MemoryItem
    from starweave.llm.base import Completion

__all__ = ["add_usage", "count_llm_call", "llm_result", "log_request", "record_step"]


def log_request(context: ProcessingContext, record: dict[str, Any]) -> None:
    """Write ``{"step": <session step>, **record}`` to the session's request log, if it keeps one."""
    request_logger = context.get_global(ContextNames.REQUEST_LOGGER)
    if request_logger is not None:
        request_logger.write({"step": context.get_global(ContextNames.SESSION_STEP), **record})


def count_llm_call(context: Any, attempts: int) -> None:
    """Add ``attempts`` model calls to the session's ``LLM_CALLS`` counter."""
    context.set(ContextNames.LLM_CALLS, int(context.get(ContextNames.LLM_CALLS) or 0) + attempts)


def llm_result(
    parsed: Any,
    completion: Completion,
    messages: list[dict[str, Any]],
    fields: dict[str, Any],
    usage: dict[str, Any] | None = None,
) -> ProcessingResult:
    """The successful LLM_INTERACTION result: the answer, the prompt, ``fields``, the cost and timing.

    ``fields`` are the agent's own keys (taken from its parsed answer); ``usage`` are extra counters
    that go with ``tokens`` (the ConstellationAgent's prompt and completion token counts).
    """
    data: dict[str, Any] = {
        "parsed_response": parsed,
        "response_text": completion.text,
        "llm_cost": completion.cost,
        "prompt_message": messages,
        **fields,
        "tokens": completion.usage.total,
        **(usage or {}),
        "llm_time": completion.latency,
    }
    return ProcessingResult(success=True, phase=ProcessingPhase.LLM_INTERACTION, data=data)


def add_usage(context: Context, cost: Any, tokens: Any) -> None:
    """Add one step's model cost and tokens to the session's ``SESSION_COST`` and ``TOTAL_TOKENS``."""
    session_cost = float(context.get(ContextNames.SESSION_COST) or 0.0)
    context.set(ContextNames.SESSION_COST, session_cost + float(cost or 0.0))
    total_tokens = int(context.get(ContextNames.TOTAL_TOKENS) or 0)
    context.set(ContextNames.TOTAL_TOKENS, total_tokens + int(tokens or 0))


def record_step(
    agent: BasicAgent,
    context: ProcessingContext,
    item: MemoryItem,
    *,
    trajectory: dict[str, Any] | None = None,
    structural_log: bool = False,
) -> dict[str, Any]:
    """Book one step: ``item`` into the agent's memory, its cost and tokens into the session's counters.

    ``trajectory`` (the part of the step other agents may see) goes on the agent's Blackboard when
    given; ``structural_log`` also adds the whole record to the context's structural logs.
    Returns the record (``item.to_dict()``).
    """
    agent.add_memory(item)
    data = item.to_dict()
    glob = context.global_context
    if structural_log:
        glob.add_to_structural_logs(data)
    if trajectory is not None:
        agent.blackboard.add_trajectories(trajectory)
    add_usage(glob, item.get_value("cost"), item.get_value("tokens"))
    return data
