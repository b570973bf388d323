"""BasicProcessorContext and ProcessingContext."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from starweave.agent import (
    LOGGED,
    BasicProcessorContext,
    Context,
    ContextNames,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    present,
)
from starweave.errors import ProcessingException


@dataclass
class AppContext(BasicProcessorContext):
    screenshot_path: str = field(default="", metadata=LOGGED)
    parsed_response: dict[str, Any] = field(default_factory=dict, metadata=LOGGED)
    control_elements: list[dict[str, Any]] = field(default_factory=list)  # not logged: bulky


def test_phase_values_and_result_defaults() -> None:
    assert [p.value for p in ProcessingPhase] == [
        "setup", "data_collection", "llm_interaction", "action_execution", "memory_update", "cleanup"
    ]  # fmt: skip
    r = ProcessingResult(success=True)
    assert r.data == {} and r.error is None and r.execution_time == 0.0


def test_update_from_dict_sets_declared_fields_and_refuses_others() -> None:
    ctx = AppContext()
    ctx.update_from_dict({"screenshot_path": "a.png", "round_step": 2})
    assert ctx.screenshot_path == "a.png" and ctx.round_step == 2
    with pytest.raises(ProcessingException, match="AppContext declares no field 'thought'"):
        ctx.update_from_dict({"thought": "click", "round_step": 3})
    assert ctx.round_step == 2  # nothing of a refused update is applied
    with pytest.raises(AttributeError, match="nothing"):
        _ = ctx.nothing  # type: ignore[attr-defined]


def test_to_dict_selective_only_logged_fields() -> None:
    ctx = AppContext()
    ctx.update_from_dict({"control_elements": [{"id": 1}], "request": "r"})
    selective = ctx.to_dict(selective=True)
    assert "control_elements" not in selective
    assert selective["request"] == "r" and "screenshot_path" in selective and "parsed_response" in selective
    for shared in ("session_step", "round_step", "round_num", "agent_step", "subtask", "cost", "results"):
        assert shared in selective
    assert {"total_time", "execution_times"} <= set(selective)
    full = ctx.to_dict(selective=False)
    assert full["control_elements"] == [{"id": 1}] and "response_text" in full


def test_processing_context_lookup_order() -> None:
    g = Context()
    g.set(ContextNames.REQUEST, "global request")
    g.set(ContextNames.SUBTASK, "global subtask")
    local = BasicProcessorContext(request="")
    local.subtask = None  # type: ignore[assignment]  # unset: falls through to the global value
    pc = ProcessingContext(g, local)
    assert pc.get("request") == ""  # local value wins even when empty
    assert pc.get("subtask") == "global subtask"
    assert (
        pc.get_global("REQUEST") == "global request"
        and pc.get_global(ContextNames.REQUEST) == "global request"
    )
    assert pc.get("missing", 7) == 7
    pc.update_local({"tokens": 1})
    assert pc.local(BasicProcessorContext).tokens == 1 and pc.get("tokens") == 1


def test_typed_local_access_and_present() -> None:
    pc = ProcessingContext(Context(), AppContext(screenshot_path="a.png"))
    assert pc.local(AppContext).screenshot_path == "a.png"
    assert pc.local(BasicProcessorContext) is pc.local_context
    other = ProcessingContext(Context(), BasicProcessorContext())
    with pytest.raises(ProcessingException, match="is a BasicProcessorContext, not the AppContext"):
        other.local(AppContext)
    with pytest.raises(ProcessingException, match="Required field 'parsed_response' not found"):
        present(other.local_context.parsed_response, "parsed_response")
    assert present([1], "parsed") == [1]
