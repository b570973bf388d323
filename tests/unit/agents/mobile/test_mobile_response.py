"""The MobileAgent's answer: parsing, the JSON schema, the CONFIRM rule, and the tool result readers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from starweave.agents.app.controls import Control
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


SCREEN = [
    Control(id="1", name="Save", control_type="Button", rect=[0, 0, 100, 50]),
    Control(id="2", name="Message", control_type="EditText", rect=[0, 60, 100, 110]),
    Control(id="3", name="Buy now", control_type="Button", rect=[0, 120, 100, 170]),
    Control(id="4", name="Delete account", control_type="Button", rect=[0, 180, 100, 230]),
    Control(id="5", name="Resend code later", control_type="Button", rect=[0, 240, 100, 290]),
    Control(id="6", name="Amount to pay", control_type="EditText", rect=[200, 0, 300, 50]),
]


@pytest.mark.parametrize(
    ("function", "arguments", "word"),
    [
        ("click_control", {"control_id": "3"}, "buy"),
        ("click_control", {"control_id": "4"}, "delete"),
        ("click_control", {"control_id": "1", "control_name": "Remove"}, "remove"),
        ("tap", {"x": 50, "y": 150}, "buy"),  # the point falls inside "Buy now"
        # The field's own name still asks; what is typed does not (see the ordinary actions).
        ("type_text", {"text": "12", "control_id": "6"}, "pay"),
        ("type_text", {"text": "x", "control_id": "9"}, None),
        ("press_key", {"key_code": "KEYCODE_ENTER"}, "send"),  # ENTER into the "Message" field
        ("launch_app", {"package_name": "com.example.uninstall"}, "uninstall"),
    ],
)
def test_sensitive_actions_need_confirmation(function: str, arguments: dict, word: str | None) -> None:
    reason = mobile_sensitive_reason(function, arguments, SCREEN)
    if word is None:
        assert reason is None
    else:
        assert reason is not None and word in reason


@pytest.mark.parametrize(
    ("function", "arguments"),
    [
        ("click_control", {"control_id": "1"}),
        ("type_text", {"text": "hello", "control_id": "2"}),
        # Typed text alone never asks: the Send or ENTER that would send it does.
        ("type_text", {"text": "please send it", "control_id": "2"}),
        ("type_text", {"text": "buy milk", "control_id": "2"}),
        ("type_text", {"text": "pay rent", "control_id": "2"}),
        ("tap", {"x": 50, "y": 20}),
        ("click_control", {"control_id": "5"}),  # a word inside another is not one
        ("launch_app", {"package_name": "com.example.notes"}),
    ],
)
def test_ordinary_actions_run_without_asking(function: str, arguments: dict) -> None:
    assert mobile_sensitive_reason(function, arguments, SCREEN) is None


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
