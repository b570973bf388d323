"""CommandRouter: validation, result conversion, early exit and failures returned as Results."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import CallToolResult, ImageContent, TextContent

from starweave.commands import Command, Result, ResultStatus
from starweave.tools import CommandRouter, ComputerManager, MCPToolCall, validate_arguments
from starweave.tools.router import to_result


def cmd(tool: str, call_id: str, tool_type: str = "action", **params: Any) -> Command:
    return Command(tool_name=tool, tool_type=tool_type, parameters=params, call_id=call_id)  # type: ignore[arg-type]


def tool_with(schema: dict[str, Any], output_schema: dict[str, Any] | None = None) -> MCPToolCall:
    return MCPToolCall("action::t", "t", "NS", "action", input_schema=schema, output_schema=output_schema)


@pytest.fixture
def router(computer_manager: ComputerManager) -> CommandRouter:
    return CommandRouter(computer_manager)


# Validation ---------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "opts": {"type": "object"},
        "free": {},
    },
    "required": ["text"],
}


@pytest.mark.parametrize(
    "args",
    [
        {"text": "a"},
        {"text": "a", "count": 3, "ratio": 0.5, "flag": True, "tags": ["x"], "opts": {}, "free": [1]},
        {"text": "a", "ratio": 2, "tags": None, "count": 4.0},
    ],
)
def test_valid_arguments(args: dict[str, Any]) -> None:
    assert validate_arguments(tool_with(SCHEMA), args) is None


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "missing required argument(s) ['text']"),
        ({"text": 1}, "argument 'text' must be string, got int 1"),
        ({"text": "a", "count": True}, "argument 'count' must be integer, got bool"),
        ({"text": "a", "count": 1.5}, "argument 'count' must be integer"),
        ({"text": "a", "ratio": "high"}, "argument 'ratio' must be number"),
        ({"text": "a", "tags": "x"}, "argument 'tags' must be array or null"),
        ({"text": "a", "opts": []}, "argument 'opts' must be object"),
    ],
)
def test_invalid_arguments(args: dict[str, Any], expected: str) -> None:
    problem = validate_arguments(tool_with(SCHEMA), args)
    assert problem is not None and expected in problem
    assert problem.startswith("Invalid arguments for tool 't'")
    assert "text: string (required)" in problem  # the expected signature is spelled out


def test_unknown_arguments_only_refused_when_schema_forbids_them() -> None:
    assert validate_arguments(tool_with(SCHEMA), {"text": "a", "extra": 1}) is None
    strict = {**SCHEMA, "additionalProperties": False}
    assert "unknown argument(s) ['extra']" in (
        validate_arguments(tool_with(strict), {"text": "a", "extra": 1}) or ""
    )


# Conversion ---------------------------------------------------------------------------------------


def text_result(text: str, is_error: bool = False, structured: Any = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], is_error=is_error, structured_content=structured
    )


def test_conversion_shapes() -> None:
    wrapped = {"properties": {"result": {"type": "integer"}}}
    assert to_result(text_result("5", structured={"result": 5}), tool_with({}, wrapped), "c").result == 5
    # A dict tool whose only key happens to be "result" keeps its dict when the schema says so.
    own = {"properties": {"result": {}, "other": {}}}
    assert to_result(text_result("", structured={"result": 1}), tool_with({}, own), "c").result == {
        "result": 1
    }
    assert to_result(text_result('{"a": [1, 2]}'), tool_with({}), "c").result == {"a": [1, 2]}
    assert to_result(text_result("plain words"), tool_with({}), "c").result == "plain words"
    image = CallToolResult(
        content=[
            TextContent(type="text", text="shot"),
            ImageContent(type="image", data="AAA", mime_type="image/png"),
        ]
    )
    payload = to_result(image, tool_with({}), "c").result
    assert payload[0] == "shot" and payload[1]["mime_type"] == "image/png"


def test_conversion_errors_and_success_false() -> None:
    failed = to_result(text_result("disk full", is_error=True), tool_with({}), "c1")
    assert (failed.status, failed.error, failed.namespace, failed.call_id) == (
        ResultStatus.FAILURE,
        "disk full",
        "NS",
        "c1",
    )
    soft = to_result(
        text_result('{"success": false, "stderr": "no such file", "exit_code": 2}'), tool_with({}), "c2"
    )
    assert soft.status == ResultStatus.FAILURE and soft.error == "no such file"
    assert soft.result == {
        "success": False,
        "stderr": "no such file",
        "exit_code": 2,
    }  # the model still sees it
    ok = to_result(text_result('{"success": true, "stdout": "x"}'), tool_with({}), "c3")
    assert ok.status == ResultStatus.SUCCESS and ok.result["stdout"] == "x"


# Routing ------------------------------------------------------------------------------------------


async def test_successful_commands(router: CommandRouter, tmp_path: Any) -> None:
    results = await router.execute(
        "LinuxAgent",
        None,
        None,
        [cmd("add", "1", a=2, b=5), cmd("run", "2", command="ls"), cmd("snapshot", "3", "data_collection")],
    )
    assert [r.status for r in results] == [ResultStatus.SUCCESS] * 3
    assert [r.call_id for r in results] == ["1", "2", "3"]
    assert results[0].result == 7 and results[0].namespace == "Shell"
    assert results[1].result["stdout"] == f"ran ls in {tmp_path}"
    assert (
        results[2].result == {"workspace": str(tmp_path), "files": 3} and results[2].namespace == "Collector"
    )


async def test_early_exit_skips_the_rest(router: CommandRouter) -> None:
    commands = [
        cmd("echo", "1", text="a"),
        cmd("run", "2", command="fail"),
        cmd("echo", "3", text="b"),
        cmd("add", "4", a=1),
    ]
    results = await router.execute("LinuxAgent", None, None, commands)
    assert [r.status for r in results] == [
        ResultStatus.SUCCESS,
        ResultStatus.FAILURE,
        ResultStatus.SKIPPED,
        ResultStatus.SKIPPED,
    ]
    assert results[1].error == "command failed" and results[1].result["exit_code"] == 1
    assert [r.call_id for r in results] == ["1", "2", "3", "4"]
    assert "earlier command ('run') failed" in (results[2].error or "")


async def test_without_early_exit_every_command_runs(router: CommandRouter) -> None:
    commands = [cmd("explode", "1"), cmd("echo", "2", text="still here")]
    results = await router.execute("LinuxAgent", None, None, commands, early_exit=False)
    assert [r.status for r in results] == [ResultStatus.FAILURE, ResultStatus.SUCCESS]
    assert "exploded on purpose" in (results[0].error or "")
    assert results[1].result == "still here"


async def test_missing_tool_is_a_failure_naming_the_tools(router: CommandRouter) -> None:
    [result] = await router.execute("LinuxAgent", None, None, [cmd("click_input", "x")])
    assert result.status == ResultStatus.FAILURE and result.call_id == "x"
    assert "'click_input'" in (result.error or "") and "available action tools: ['add', 'echo'" in (
        result.error or ""
    )


async def test_bad_arguments_are_refused_before_the_call(router: CommandRouter) -> None:
    results = await router.execute(
        "LinuxAgent", None, None, [cmd("add", "1", b=2), cmd("echo", "2", text="x")]
    )
    assert results[0].status == ResultStatus.FAILURE
    assert "missing required argument(s) ['a']" in (results[0].error or "")
    assert results[1].status == ResultStatus.SKIPPED


async def test_timeout_is_a_failure(router: CommandRouter) -> None:
    [result] = await router.execute("LinuxAgent", None, None, [cmd("sleep", "s", seconds=10)])
    assert result.status == ResultStatus.FAILURE
    assert result.error == "Tool execution timed out after 2s" and result.namespace == "Shell"


async def test_meta_tool_through_the_router(router: CommandRouter) -> None:
    [result] = await router.execute(
        "LinuxAgent", None, None, [cmd("list_tools", "m", tool_type="data_collection")]
    )
    assert result.status == ResultStatus.SUCCESS
    assert {t["tool_name"] for t in result.result} == {"snapshot", "echo"}


async def test_unusable_computer_fails_every_command(router: CommandRouter) -> None:
    for agent, fragment in (("MobileAgent", "configured agents"), ("BrokenAgent", "also offered by server")):
        results: list[Result] = await router.execute(
            agent, None, None, [cmd("echo", "1", text="a"), cmd("echo", "2")]
        )
        assert [r.status for r in results] == [ResultStatus.FAILURE, ResultStatus.FAILURE]
        assert all(fragment in (r.error or "") for r in results)
        assert [r.call_id for r in results] == ["1", "2"]
