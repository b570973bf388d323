"""The MobileAgent's answer: parsing, the JSON schema, the CONFIRM rule, and the tool result readers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from starweave.agents.mobile import MobileAgentResponse, response_json_schema
from starweave.agents.mobile.safety import mobile_sensitive_reason
from starweave.agents.mobile.tools import action_failure, action_output, apps_of, controls_of
from starweave.commands import Result, ResultStatus


def test_an_answer_parses_with_aliases_and_a_lowercase_status() -> None:
    parsed = MobileAgentResponse.model_validate(
        {
            "Thought": "t",
            "action": {"tool": "tap", "args": {"x": 1, "y": 2}, "status": "finish"},
            "comment": "c",
        }
    )
    assert parsed.status == "FINISH"
    assert parsed.call_string() == "tap(x=1, y=2)"
    assert MobileAgentResponse.model_validate({"action": {"arguments": None}}).action.arguments == {}


def test_an_unknown_status_is_refused() -> None:
    with pytest.raises(ValidationError, match="status must be one of"):
        MobileAgentResponse.model_validate({"action": {"function": "", "status": "CONFIRM"}})


def test_the_schema_pairs_each_tool_with_its_parameters() -> None:
    tools = [{"name": "wait", "input_schema": {"properties": {"seconds": {"type": "number"}}}}]
    schema = response_json_schema(tools)
    assert schema["required"] == ["thought", "action", "comment"]
    branches = schema["properties"]["action"]["anyOf"]
    assert [b["properties"]["function"]["const"] for b in branches] == ["wait", ""]
    assert branches[0]["properties"]["arguments"]["properties"] == {"seconds": {"type": "number"}}


@pytest.mark.parametrize(
    ("function", "arguments", "control", "word"),
    [
        ("click_control", {"control_id": "4"}, "Send", "send"),
        ("click_control", {"control_id": "4"}, "Delete message", "delete"),
        ("click_control", {"control_id": "4", "control_name": "Remove"}, "", "remove"),
        ("click_control", {"control_id": "4"}, "Pay $5", "pay"),
        ("click_control", {"control_id": "4"}, "Buy now", "buy"),
        ("click_control", {"control_id": "4"}, "INSTALL", "install"),
        ("click_control", {"control_id": "4"}, "Uninstall", "uninstall"),
        ("type_text", {"text": "please send it", "control_id": "2"}, "Message", "send"),
    ],
)
def test_sensitive_actions_need_confirmation(function: str, arguments: dict, control: str, word: str) -> None:
    reason = mobile_sensitive_reason(function, arguments, control)
    assert reason is not None and f"says {word}" in reason


@pytest.mark.parametrize(
    ("function", "arguments", "control"),
    [
        ("click_control", {"control_id": "3"}, "Save"),
        ("type_text", {"text": "hello", "control_id": "2"}, "Note"),
        ("tap", {"x": 1, "y": 2}, ""),
        ("click_control", {"control_id": "3"}, "Resend code later"),  # a word inside another is not one
        ("launch_app", {"package_name": "com.example.notes"}, ""),
    ],
)
def test_ordinary_actions_run_without_asking(function: str, arguments: dict, control: str) -> None:
    assert mobile_sensitive_reason(function, arguments, control) is None


def ok(value: object) -> Result:
    return Result(status=ResultStatus.SUCCESS, result=value)


def test_the_target_lists_are_read_in_the_spec_shape() -> None:
    controls = controls_of(ok([{"id": "1", "name": "Save", "type": "Button", "rect": [1, 2, 3, 4]}, "junk"]))
    assert [(c.id, c.name, c.control_type, c.rect) for c in controls] == [
        ("1", "Save", "Button", [1, 2, 3, 4])
    ]
    assert apps_of(ok({"result": [{"id": "1", "name": "com.a", "type": "com.a"}]})) == ["com.a"]
    assert controls_of(Result(status=ResultStatus.FAILURE, error="adb gone")) == []


def test_action_results_report_failure_and_output() -> None:
    assert action_failure(ok({"success": False, "error": "control 9 not found"})) == "control 9 not found"
    assert action_failure(ok({"success": True, "action": "tap"})) == ""
    assert action_failure(Result(status=ResultStatus.FAILURE, error="timeout")) == "timeout"
    assert (
        action_output(ok({"success": True, "message": "Typed", "warning": "name differs"}))
        == "Typed | warning: name differs"
    )
