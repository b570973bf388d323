"""The LinuxAgent response model and the JSON schema built from the device's tools."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from starweave.agents.linux.feedback import clip, describe_result
from starweave.agents.linux.response import LinuxAgentResponse, response_json_schema
from starweave.commands import Result, ResultStatus
from starweave.llm.jsonschema import schema_errors

TOOLS = [
    {
        "name": "execute_command",
        "input_schema": {
            "properties": {
                "command": {"type": "string"},
                "cwd": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            },
            "required": ["command"],
        },
    },
    {"name": "get_system_info", "input_schema": {"properties": {}}},
]


def test_schema_allows_only_the_tools_and_their_parameters() -> None:
    schema = response_json_schema(TOOLS)
    good = {
        "observation": "o",
        "thought": "t",
        "action": {"function": "execute_command", "arguments": {"command": "ls"}, "status": "CONTINUE"},
        "result": "",
    }
    assert schema_errors(good, schema) == []
    bad_tool = {**good, "action": {**good["action"], "function": "rm_everything"}}
    assert schema_errors(bad_tool, schema)
    bad_arg = {**good, "action": {**good["action"], "arguments": {"shell": "ls"}}}
    assert schema_errors(bad_arg, schema)
    bad_status = {**good, "action": {**good["action"], "status": "DONE"}}
    assert schema_errors(bad_status, schema)
    arguments = schema["properties"]["action"]["properties"]["arguments"]["properties"]
    assert arguments["cwd"]["type"] == "string"


def test_response_accepts_reference_spellings() -> None:
    parsed = LinuxAgentResponse.model_validate(
        {
            "Observation": "o",
            "Thought": "t",
            "action": {"tool": "execute_command", "args": None, "status": "finish"},
        }
    )
    assert parsed.action.function == "execute_command"
    assert parsed.action.arguments == {}
    assert parsed.status == "FINISH"
    with pytest.raises(ValidationError):
        LinuxAgentResponse.model_validate({"action": {"function": "x", "status": "MAYBE"}})


def test_clip_keeps_head_and_tail() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    clipped = clip(text, 300)
    assert clipped.startswith("line 0") and clipped.endswith("line 999")
    assert "lines cut" in clipped and len(clipped) < 400
    assert clip("short", 300) == "short"


def test_describe_result_shapes() -> None:
    shell = Result(status=ResultStatus.SUCCESS, result={"exit_code": 0, "stdout": "hi\n", "stderr": ""})
    assert describe_result(shell) == "exit code 0\nstdout:\nhi"
    empty = Result(status=ResultStatus.SUCCESS, result={"exit_code": 1, "stdout": "", "stderr": ""})
    assert "(no output)" in describe_result(empty)
    blocked = Result(status=ResultStatus.FAILURE, result={"success": False, "error": "Blocked: no"})
    assert describe_result(blocked) == "Error: Blocked: no"
    skipped = Result(status=ResultStatus.SKIPPED, error="earlier command failed")
    assert describe_result(skipped) == "Not run: earlier command failed"
    timeout = Result(
        status=ResultStatus.FAILURE,
        result={
            "success": False,
            "error": "Timeout after 1s.",
            "exit_code": None,
            "stdout": "started\n",
            "stderr": "",
        },
    )
    assert describe_result(timeout) == "Error: Timeout after 1s.\nstdout:\nstarted"
    failure = Result(status=ResultStatus.FAILURE, error="tool missing")
    assert describe_result(failure) == "Error: tool missing"
