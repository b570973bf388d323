"""Context: typed defaults, lenient lookup, auto-synced round values, serialisation."""

from __future__ import annotations

import io
import json

import pytest

from starweave.agent import Context, ContextNames


def test_every_name_has_a_default_and_mutables_are_per_context() -> None:
    a, b = Context(), Context()
    for name in ContextNames:
        assert a.get(name) == name.default_value or name is ContextNames.STRUCTURAL_LOGS
    a.get(ContextNames.PREVIOUS_SUBTASKS).append("x")
    assert a.get(ContextNames.PREVIOUS_SUBTASKS) == ["x"]
    assert b.get(ContextNames.PREVIOUS_SUBTASKS) == []
    assert ContextNames.ROUND_STEP.default_value is not ContextNames.ROUND_STEP.default_value


def test_spec_names_exist() -> None:
    for name in [
        "ID",
        "MODE",
        "CURRENT_ROUND_ID",
        "REQUEST",
        "SUBTASK",
        "PREVIOUS_SUBTASKS",
        "HOST_MESSAGE",
        "ROUND_RESULT",
        "SESSION_COST",
        "ROUND_COST",
        "CURRENT_ROUND_COST",
        "SESSION_STEP",
        "ROUND_STEP",
        "CURRENT_ROUND_STEP",
        "ROUND_SUBTASK_AMOUNT",
        "CURRENT_ROUND_SUBTASK_AMOUNT",
        "APPLICATION_WINDOW",
        "APPLICATION_WINDOW_INFO",
        "APPLICATION_PROCESS_NAME",
        "APPLICATION_ROOT_NAME",
        "CONTROL_REANNOTATION",
        "LOG_PATH",
        "LOGGER",
        "REQUEST_LOGGER",
        "EVALUATION_LOGGER",
        "STRUCTURAL_LOGS",
        "TOOL_INFO",
        "DEVICE_INFO",
        "CONSTELLATION",
        "WEAVING_MODE",
        "SESSION_FINISH",
        "ERROR",
        "ERROR_MESSAGE",
        "TOTAL_COST",
        "TOTAL_TOKENS",
        "TRAJECTORY",
        "SUBTASK_AMOUNT",
    ]:
        assert ContextNames[name].value == name


def test_get_set_by_enum_or_name_and_defaults() -> None:
    ctx = Context()
    ctx.set("REQUEST", "hello")
    assert ctx.get(ContextNames.REQUEST) == "hello"
    assert ctx.get("unknown_key") is None and ctx.get("unknown_key", 5) == 5
    ctx.set(ContextNames.LOGGER, None)
    assert ctx.get(ContextNames.LOGGER, "fallback") == "fallback"
    ctx.set("custom", {"a": 1})
    assert ctx.get("custom") == {"a": 1}


def test_resolve_is_lenient() -> None:
    ctx = Context()
    ctx.set(ContextNames.SESSION_STEP, 4)
    dispatcher = object()
    ctx.attach_command_dispatcher(dispatcher)
    assert ctx.resolve("session_step") == 4
    assert ctx.resolve("command_dispatcher") is dispatcher
    assert ctx.command_dispatcher is dispatcher
    assert ctx.resolve("nothing_here") is None


def test_update_dict_batch_and_merge() -> None:
    ctx = Context()
    ctx.update_dict({ContextNames.MODE: "normal", "ID": 3})
    assert ctx.get(ContextNames.MODE) == "normal" and ctx.get(ContextNames.ID) == 3
    ctx.update_dict(ContextNames.TOOL_INFO, {"shell": 1})
    ctx.update_dict(ContextNames.TOOL_INFO, {"files": 2})
    assert ctx.get(ContextNames.TOOL_INFO) == {"shell": 1, "files": 2}
    with pytest.raises(TypeError, match="not a dict"):
        ctx.update_dict(ContextNames.REQUEST, {"x": 1})


def test_round_properties_write_both_places() -> None:
    ctx = Context()
    ctx.set(ContextNames.CURRENT_ROUND_ID, 1)
    ctx.current_round_step = 3
    ctx.current_round_cost = 0.25
    ctx.current_round_subtask_amount = 2
    assert ctx.get(ContextNames.ROUND_STEP) == {1: 3}
    assert ctx.get(ContextNames.CURRENT_ROUND_STEP) == 3
    assert ctx.get(ContextNames.ROUND_COST) == {1: 0.25} and ctx.get(ContextNames.CURRENT_ROUND_COST) == 0.25
    assert ctx.get(ContextNames.ROUND_SUBTASK_AMOUNT) == {1: 2}
    assert ctx.get(ContextNames.CURRENT_ROUND_SUBTASK_AMOUNT) == 2
    # a new round starts from zero, and returning to round 1 restores its values
    ctx.set(ContextNames.CURRENT_ROUND_ID, 2)
    assert ctx.current_round_step == 0 and ctx.get(ContextNames.CURRENT_ROUND_STEP) == 0
    ctx.current_round_step = 1
    ctx.set(ContextNames.CURRENT_ROUND_ID, 1)
    assert ctx.get(ContextNames.CURRENT_ROUND_STEP) == 3 and ctx.current_round_cost == 0.25


def test_structural_logs() -> None:
    ctx = Context()
    ctx.add_to_structural_logs({"Round": 0, "Subtask": 1, "Step": 5})
    ctx.add_to_structural_logs({"Step": 6})
    logs = ctx.get(ContextNames.STRUCTURAL_LOGS)
    assert logs[0][1] == [{"Step": 5}] and logs[0][0] == [{"Step": 6}]


def test_to_dict_is_json_safe_and_round_trips() -> None:
    ctx = Context()
    ctx.set(ContextNames.REQUEST, "do it")
    ctx.set(ContextNames.LOGGER, io.StringIO())
    ctx.set(ContextNames.APPLICATION_WINDOW, "a window handle")
    ctx.set("not_serialisable", object())
    ctx.set(ContextNames.CURRENT_ROUND_ID, 1)
    ctx.current_round_step = 2
    ctx.add_to_structural_logs({"Step": 1})
    ctx.attach_command_dispatcher(object())
    data = ctx.to_dict()
    for left_out in ("LOGGER", "APPLICATION_WINDOW", "not_serialisable", "command_dispatcher"):
        assert left_out not in data
    text = json.dumps(data)
    back = Context.from_dict(json.loads(text))
    assert back.get(ContextNames.REQUEST) == "do it"
    assert back.get(ContextNames.ROUND_STEP) == {1: 2}
    assert back.current_round_step == 2
    assert back.to_dict() == json.loads(text)
    back.add_to_structural_logs({"Step": 2})  # same round and subtask as before the trip
    assert back.get(ContextNames.STRUCTURAL_LOGS)[1][0] == [{"Step": 1}, {"Step": 2}]
