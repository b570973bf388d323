"""CommandRouter: runs a step's Commands on the right Computer and turns the outcomes into Results.

Failures are returned, never raised: a missing tool, bad arguments, a tool error, a timeout or a
server that cannot start all become FAILURE Results the model can read and react to. With
``early_exit`` every command after a failure is SKIPPED, because later commands of a step usually
depend on the earlier ones.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.types import CallToolResult, TextContent

from starweave.commands import Command, Result, ResultStatus
from starweave.errors import ToolError
from starweave.tools.computer import Computer, MCPToolCall
from starweave.tools.computer_manager import ComputerManager
from starweave.tools.mcp_manager import describe_exception

logger = logging.getLogger(__name__)

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def _matches_type(value: Any, json_type: str) -> bool:
    if json_type not in _JSON_TYPES:
        return True  # a type we do not check is left to the server
    if isinstance(value, bool) and json_type in ("integer", "number"):
        return False
    if json_type == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[json_type])


def _matches_schema(value: Any, schema: dict[str, Any]) -> bool:
    """A shallow check: ``type`` (one or a list) and ``anyOf``/``oneOf`` branches."""
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            return any(isinstance(b, dict) and _matches_schema(value, b) for b in branches)
    declared = schema.get("type")
    if declared is None:
        return True
    types = declared if isinstance(declared, list) else [declared]
    return any(_matches_type(value, t) for t in types)


def _describe_type(schema: dict[str, Any]) -> str:
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            return " or ".join(_describe_type(b) for b in branches if isinstance(b, dict))
    declared = schema.get("type", "any")
    return " or ".join(declared) if isinstance(declared, list) else str(declared)


def validate_arguments(tool: MCPToolCall, arguments: dict[str, Any]) -> str | None:
    """The problem with ``arguments`` for ``tool``'s input schema, or None when they fit."""
    schema = tool.input_schema or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    problems: list[str] = []
    missing = [name for name in schema.get("required") or [] if name not in arguments]
    if missing:
        problems.append(f"missing required argument(s) {missing}")
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(arguments) - set(properties))
        if unknown:
            problems.append(f"unknown argument(s) {unknown}")
    for name, value in arguments.items():
        prop = properties.get(name)
        if isinstance(prop, dict) and not _matches_schema(value, prop):
            problems.append(
                f"argument {name!r} must be {_describe_type(prop)}, got {type(value).__name__} {value!r:.60}"
            )
    if not problems:
        return None
    expected = ", ".join(
        f"{name}: {_describe_type(prop) if isinstance(prop, dict) else 'any'}"
        + (" (required)" if name in (schema.get("required") or []) else "")
        for name, prop in properties.items()
    )
    return f"Invalid arguments for tool {tool.tool_name!r}: {'; '.join(problems)}. Expected: {{{expected}}}"


def _text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def _unwrap(structured: Any, tool: MCPToolCall) -> Any:
    # MCPServer wraps a non-object return value as {"result": value}; hand back the value itself.
    if not (isinstance(structured, dict) and set(structured) == {"result"}):
        return structured
    declared = (tool.output_schema or {}).get("properties")
    if declared is None or set(declared) == {"result"}:
        return structured["result"]
    return structured


def result_payload(result: CallToolResult, tool: MCPToolCall) -> Any:
    """What a successful call returned: structured content, else decoded JSON text, else the text."""
    if result.structured_content is not None:
        return _unwrap(result.structured_content, tool)
    others = [block for block in result.content if not isinstance(block, TextContent)]
    text = _text_of(result)
    if others:
        return [text, *(block.model_dump(mode="json", exclude_none=True) for block in others)]
    try:
        return json.loads(text)
    except ValueError:
        return text


def to_result(result: CallToolResult, tool: MCPToolCall, call_id: str | None) -> Result:
    """Convert one CallToolResult; a dict with ``success: false`` counts as a FAILURE."""
    if result.is_error:
        return Result(
            status=ResultStatus.FAILURE,
            error=_text_of(result) or f"Tool {tool.tool_name!r} reported an error without a message",
            namespace=tool.namespace,
            call_id=call_id,
        )
    payload = result_payload(result, tool)
    if isinstance(payload, dict) and payload.get("success") is False:
        error = (
            payload.get("error")
            or payload.get("stderr")
            or f"Tool {tool.tool_name!r} reported success: false"
        )
        return Result(
            status=ResultStatus.FAILURE,
            error=str(error),
            result=payload,
            namespace=tool.namespace,
            call_id=call_id,
        )
    return Result(status=ResultStatus.SUCCESS, result=payload, namespace=tool.namespace, call_id=call_id)


class CommandRouter:
    """Routes Commands to the Computer of their agent context."""

    def __init__(self, computer_manager: ComputerManager) -> None:
        self.computer_manager = computer_manager

    async def execute(
        self,
        agent_name: str,
        process_name: str | None,
        root_name: str | None,
        commands: list[Command],
        early_exit: bool = True,
    ) -> list[Result]:
        """One Result per Command, in order; never raises for a tool-level problem."""
        try:
            computer = await self.computer_manager.get_or_create(agent_name, process_name, root_name)
        except ToolError as exc:
            return [
                Result(status=ResultStatus.FAILURE, error=str(exc), call_id=command.call_id)
                for command in commands
            ]
        results: list[Result] = []
        failed: str | None = None
        for command in commands:
            if failed is not None and early_exit:
                results.append(
                    Result(
                        status=ResultStatus.SKIPPED,
                        error=f"Skipped because an earlier command ({failed!r}) failed",
                        call_id=command.call_id,
                    )
                )
                continue
            result = await self._execute_one(computer, command)
            if result.status == ResultStatus.FAILURE:
                failed = command.tool_name
            results.append(result)
        return results

    async def _execute_one(self, computer: Computer, command: Command) -> Result:
        try:
            tool = computer.command2tool(command)
        except ToolError as exc:
            return Result(status=ResultStatus.FAILURE, error=str(exc), call_id=command.call_id)
        problem = validate_arguments(tool, tool.parameters or {})
        if problem is not None:
            return Result(
                status=ResultStatus.FAILURE, error=problem, namespace=tool.namespace, call_id=command.call_id
            )
        try:
            [outcome] = await computer.run_actions([tool])
        except ToolError as exc:
            return Result(
                status=ResultStatus.FAILURE,
                error=f"Tool {tool.tool_name!r} failed: {describe_exception(exc)}",
                namespace=tool.namespace,
                call_id=command.call_id,
            )
        return to_result(outcome, tool, command.call_id)
