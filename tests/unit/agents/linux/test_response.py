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
    with_cwd = {**good, "action": {**good["action"], "arguments": {"command": "ls", "cwd": "sub"}}}
    assert schema_errors(with_cwd, schema) == []
    done = {**good, "action": {"function": "", "arguments": {}, "status": "FINISH"}}
    assert schema_errors(done, schema) == []
    bad_tool = {**good, "action": {**good["action"], "function": "rm_everything"}}
    assert schema_errors(bad_tool, schema)
    bad_arg = {**good, "action": {**good["action"], "arguments": {"shell": "ls"}}}
    assert schema_errors(bad_arg, schema)
    bad_status = {**good, "action": {**good["action"], "status": "DONE"}}
    assert schema_errors(bad_status, schema)


def test_schema_pairs_each_tool_with_its_own_required_parameters() -> None:
    schema = response_json_schema(TOOLS)
    missing = {"function": "execute_command", "arguments": {}, "status": "CONTINUE"}
    other_tools_args = {"function": "get_system_info", "arguments": {"command": "ls"}, "status": "CONTINUE"}
    args_without_call = {"function": "", "arguments": {"command": "ls"}, "status": "FINISH"}
    for action in (missing, other_tools_args, args_without_call):
        answer = {"observation": "o", "thought": "t", "action": action, "result": ""}
        assert schema_errors(answer, schema), action
    branches = schema["properties"]["action"]["anyOf"]
    assert [b["properties"]["function"]["const"] for b in branches] == [
        "execute_command",
        "get_system_info",
        "",
    ]
    assert branches[0]["properties"]["arguments"]["properties"]["cwd"]["type"] == "string"
    assert branches[0]["properties"]["arguments"]["required"] == ["command"]


def test_schema_caps_the_free_text_fields_short() -> None:
    schema = response_json_schema(TOOLS)
    long_thought = {
        "observation": "o",
        "thought": "x" * 200,
        "action": {"function": "", "arguments": {}, "status": "CONTINUE"},
        "result": "",
    }
    assert schema_errors(long_thought, schema)
    assert schema["properties"]["result"]["maxLength"] > schema["properties"]["thought"]["maxLength"]


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
    # a file tool's refusal of a path outside what the model may read
    refusal = "Blocked: reading '/etc/shadow' is refused: /etc/shadow is a sensitive system path"
    blocked = Result(status=ResultStatus.FAILURE, result={"success": False, "error": refusal})
    assert describe_result(blocked) == f"Error: {refusal}"
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


def test_a_command_that_moves_or_is_sent_back_says_where_the_next_one_starts() -> None:
    moved = Result(
        status=ResultStatus.SUCCESS,
        result={"success": True, "exit_code": 0, "stdout": "", "stderr": "", "cwd": "/ws/sub"},
    )
    assert describe_result(moved) == "exit code 0\n(no output)\n(the next command starts in /ws/sub)"
    note = "the command ended outside the workspace; the next command starts in /ws, as before"
    sent_back = Result(
        status=ResultStatus.SUCCESS,
        result={"success": True, "exit_code": 0, "stdout": "/\n", "stderr": "", "note": note},
    )
    assert describe_result(sent_back) == f"exit code 0\nstdout:\n/\n(note: {note})"


def test_file_tool_answers_read_like_command_output() -> None:
    listing = Result(
        status=ResultStatus.SUCCESS,
        result={
            "success": True,
            "path": "/ws/reports",
            "entries": [
                {"name": "a.csv", "type": "file", "size": 4},
                {"name": "old", "type": "dir", "size": 4096},
                {"name": "link", "type": "symlink", "size": 7},
            ],
            "truncated": False,
            "total": 3,
        },
    )
    # the same words as the workspace view (orientation): sizes as people read them
    assert describe_result(listing) == "/ws/reports: 3 entries\na.csv  4 B\nold/\nlink  (symlink)"
    read = Result(
        status=ResultStatus.SUCCESS,
        result={"success": True, "path": "/ws/a.txt", "size": 6, "content": "hello\n", "truncated": False},
    )
    assert describe_result(read) == "/ws/a.txt (6 bytes):\nhello"
    written = Result(
        status=ResultStatus.SUCCESS, result={"success": True, "path": "/ws/s.py", "bytes_written": 9}
    )
    assert describe_result(written) == "wrote 9 bytes to /ws/s.py"
    other = Result(status=ResultStatus.SUCCESS, result={"uname": "Linux", "uptime": "up 3 days"})
    assert describe_result(other) == '{"uname": "Linux", "uptime": "up 3 days"}'
