"""The shared pieces of the agents' LLM-interaction and memory-update strategies (starweave.agent.steps)."""

from __future__ import annotations

from typing import Any

from starweave.agent import (
    BasicAgent,
    BasicProcessorContext,
    BasicPrompter,
    Context,
    ContextNames,
    MemoryItem,
    ProcessingContext,
    ProcessingPhase,
    add_usage,
    count_llm_call,
    llm_result,
    log_request,
    record_step,
)
from starweave.llm.base import Completion, Usage


class _Agent(BasicAgent):
    def get_prompter(self, *args: Any, **kwargs: Any) -> BasicPrompter:
        return BasicPrompter(False, None, None)

    def message_constructor(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []


class _Writer:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)


def _context(**values: Any) -> ProcessingContext:
    glob = Context()
    for name, value in values.items():
        glob.set(ContextNames[name], value)
    return ProcessingContext(glob, BasicProcessorContext())


def _completion() -> Completion:
    return Completion(
        text='{"a": 1}',
        parsed={"a": 1},
        usage=Usage(prompt_tokens=30, completion_tokens=12),
        cost=0.25,
        latency=1.5,
        model="m",
        provider="p",
        attempts=2,
    )


def test_log_request_prepends_the_step_and_keeps_the_order() -> None:
    writer = _Writer()
    ctx = _context(REQUEST_LOGGER=writer, SESSION_STEP=4)
    log_request(ctx, {"agent": "a", "prompt": [{"role": "user", "content": "hi"}]})
    assert writer.records == [{"step": 4, "agent": "a", "prompt": [{"role": "user", "content": "hi"}]}]
    assert list(writer.records[0]) == ["step", "agent", "prompt"]


def test_log_request_without_a_logger_does_nothing() -> None:
    log_request(_context(SESSION_STEP=1), {"prompt": []})  # must not raise


def test_count_llm_call_adds_up() -> None:
    glob = Context()
    count_llm_call(glob, 2)
    count_llm_call(glob, 3)
    assert glob.get(ContextNames.LLM_CALLS) == 5


def test_llm_result_carries_answer_prompt_fields_and_usage() -> None:
    messages = [{"role": "user", "content": "q"}]
    result = llm_result("parsed", _completion(), messages, {"thought": "t"}, {"prompt_tokens": 30})
    assert result.success and result.phase is ProcessingPhase.LLM_INTERACTION
    assert result.data == {
        "parsed_response": "parsed",
        "response_text": '{"a": 1}',
        "llm_cost": 0.25,
        "prompt_message": messages,
        "thought": "t",
        "tokens": 42,
        "prompt_tokens": 30,
        "llm_time": 1.5,
    }
    assert list(result.data)[-3:] == ["tokens", "prompt_tokens", "llm_time"]


def test_add_usage_accumulates_cost_and_tokens() -> None:
    glob = Context()
    add_usage(glob, 0.5, 10)
    add_usage(glob, None, None)
    add_usage(glob, 0.25, 5)
    assert glob.get(ContextNames.SESSION_COST) == 0.75
    assert glob.get(ContextNames.TOTAL_TOKENS) == 15


def test_record_step_books_memory_trajectory_logs_and_usage() -> None:
    agent = _Agent("a")
    ctx = _context()
    item = MemoryItem.from_dict({"step": 1, "thought": "t", "cost": 0.5, "tokens": 7})
    data = record_step(agent, ctx, item, trajectory={"step": 1, "thought": "t"}, structural_log=True)
    assert data == item.to_dict()
    assert agent.memory.get_latest_item() is item
    assert [t.to_dict() for t in agent.blackboard.trajectories] == [{"step": 1, "thought": "t"}]
    logs = ctx.global_context.get(ContextNames.STRUCTURAL_LOGS)
    entries = [entry for subtasks in logs.values() for found in subtasks.values() for entry in found]
    assert entries == [data]
    assert ctx.global_context.get(ContextNames.SESSION_COST) == 0.5
    assert ctx.global_context.get(ContextNames.TOTAL_TOKENS) == 7


def test_record_step_without_trajectory_leaves_the_blackboard_alone() -> None:
    agent = _Agent("a")
    ctx = _context()
    record_step(agent, ctx, MemoryItem.from_dict({"step": 1, "cost": 0.0, "tokens": 0}))
    assert agent.blackboard.trajectories.is_empty()
    assert not ctx.global_context.get(ContextNames.STRUCTURAL_LOGS)
