"""Helpers the device agents share (starweave.agents.common)."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import AfterValidator, BaseModel, Field, ValidationError

from starweave.agents.common import (
    NO_ACTION_RUN,
    Arguments,
    TextList,
    argument_schema,
    as_list,
    call_string,
    noted_output,
    plain_request,
    status_checker,
)

_Status = Annotated[str, AfterValidator(status_checker(("CONTINUE", "FINISH")))]


class _Answer(BaseModel):
    status: _Status = "CONTINUE"
    arguments: Arguments = Field(default_factory=dict)
    plan: TextList = Field(default_factory=list)


def test_status_is_upper_cased_and_checked() -> None:
    assert _Answer.model_validate({"status": " finish "}).status == "FINISH"
    with pytest.raises(ValidationError, match="status must be one of CONTINUE, FINISH, not 'DONE'"):
        _Answer.model_validate({"status": "done"})


def test_null_arguments_and_lone_strings_are_accepted() -> None:
    answer = _Answer.model_validate({"arguments": None, "plan": "one step"})
    assert answer.arguments == {} and answer.plan == ["one step"]
    assert _Answer.model_validate({"plan": None}).plan == []
    assert as_list(["a", "b"]) == ["a", "b"]


def test_call_string() -> None:
    assert call_string("", {"x": 1}) == "(no action)"
    assert call_string("execute_command", {"command": "ls"}).startswith("execute_command(")


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "input_schema": {"properties": properties}}


def test_argument_schema_merges_types_and_caps_strings() -> None:
    tools = [
        _tool("a", {"text": {"type": "string"}, "n": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}),
        _tool("b", {"content": {"type": "string"}, "text": {"type": "integer"}, "odd": "not a dict"}),
    ]
    schema = argument_schema(tools)
    assert schema["additionalProperties"] is False
    assert schema["properties"] == {
        "text": {"type": "string", "maxLength": 2000},
        "n": {"type": "integer"},
        "content": {"type": "string", "maxLength": 2000},
    }
    only_content = argument_schema(tools, long_fields=("content",))
    assert only_content["properties"]["text"]["maxLength"] == 400
    assert only_content["properties"]["content"]["maxLength"] == 2000


def test_noted_output_puts_the_note_first() -> None:
    assert noted_output(None, NO_ACTION_RUN) == NO_ACTION_RUN
    assert noted_output("", NO_ACTION_RUN) == NO_ACTION_RUN
    assert noted_output("Waiting.", "click()") == "Waiting.\nclick()"


def test_a_galaxy_task_reads_as_its_description_and_tips() -> None:
    from starweave.galaxy.constellation.task_star import TaskStar

    bare = TaskStar(task_id="a", description="Write hello into notes.txt.").to_request_string()
    assert plain_request(bare) == "Write hello into notes.txt."
    tipped = TaskStar(task_id="b", description="Sort it.", tips=["use sort -n"]).to_request_string()
    assert plain_request(tipped) == "Sort it.\nTips:\n - use sort -n"
    with_results = bare + "\n\nResults of prerequisite tasks:\n- a (t1): 97"
    assert (
        plain_request(with_results)
        == "Write hello into notes.txt.\n\nResults of prerequisite tasks:\n- a (t1): 97"
    )
    typed = "Task Description: is how my notes begin"  # not the frame: left as the user wrote it
    assert plain_request(typed) == typed
