"""The ConstellationAgent's answer: statuses, the response model and the JSON schemas for the LLM layer.

Creation answers carry a ``constellation`` (tasks + dependencies), editing answers an ``action`` list of
MCP tool calls (spec B §5.1, E §7). The JSON schemas are what the LLM layer validates (and, on the
embedded model, decodes) against; they constrain device ids and tool names to the ones that exist.
Statuses are normalised: any letter case, and "FAILED"/"FINISHED" as the reference's validator allowed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from starweave.agent import BasicAgent
from starweave.errors import InvalidArgumentError
from starweave.galaxy.constellation import TaskConstellationSchema
from starweave.galaxy.constellation.schema import DEVICE_TYPE_ALIASES, DEVICE_TYPES


class ConstellationAgentStatus(StrEnum):
    """The four states of the ConstellationAgent's FSM (values as the LLM writes them)."""

    START = "START"
    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"


class WeavingMode(StrEnum):
    """Creation builds a new constellation; editing changes the running one."""

    CREATION = "CREATION"
    EDITING = "EDITING"


# What the LLM may answer; the reference's validator also let "FAILED" through (spec E §6.2).
_ALIASES = {"FAILED": "FAIL", "FAILURE": "FAIL", "FINISHED": "FINISH", "DONE": "FINISH"}
LLM_STATUSES = ("CONTINUE", "FINISH", "FAIL")
# Letter-case variants are listed so constrained decoding and validation accept them alike.
_STATUS_ENUM = sorted({s for base in (*LLM_STATUSES, "FAILED") for s in (base, base.lower())})


def normalise_status(value: Any) -> str:
    """The FSM status for an LLM status string: upper-cased, "FAILED" → "FAIL"; ValueError if unknown."""
    text = str(getattr(value, "value", value) or "").strip().upper()
    text = _ALIASES.get(text, text)
    if text not in ConstellationAgentStatus.__members__:
        allowed = ", ".join(s.value for s in ConstellationAgentStatus)
        raise InvalidArgumentError(f"status must be one of {allowed} (any case), not {value!r}")
    return text


class ActionCommandInfo(BaseModel):
    """One tool call of an answer, and (after execution) its outcome."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    function: str = Field("", validation_alias=AliasChoices("function", "tool", "tool_name"))
    arguments: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "args", "parameters")
    )
    status: str = ""
    result: Any = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _no_null_arguments(cls, value: Any) -> Any:
        # Small models write keys with stray spaces ("description "); the tools would refuse them.
        if isinstance(value, dict):
            return {str(k).strip(): v for k, v in value.items()}
        return {} if value is None else value

    def to_representation(self) -> str:
        """``function(arg=value, ...)``."""
        return BasicAgent.get_command_string(self.function or "no_action", self.arguments)


class ConstellationAgentResponse(BaseModel):
    """One parsed answer of the ConstellationAgent (either mode)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    thought: str
    status: str
    observation: str = ""
    plan: Any = None
    operation: Any = None
    constellation: TaskConstellationSchema | None = None
    action: list[ActionCommandInfo] | None = None
    results: Any = Field(None, validation_alias=AliasChoices("results", "result"))

    @field_validator("thought")
    @classmethod
    def _thought(cls, value: str) -> str:
        if not value or not value.strip():
            raise ValueError("Missing 'thought' field: explain the plan in 'thought'")
        return value

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> str:
        if value is None or not str(value).strip():
            raise ValueError("Missing 'status' field: answer CONTINUE, FINISH or FAIL")
        return normalise_status(value)

    @field_validator("constellation", mode="before")
    @classmethod
    def _empty_constellation(cls, value: Any) -> Any:
        # Models write {} or {"tasks": []} for "no constellation"; treat both as none.
        if isinstance(value, dict) and not value.get("tasks"):
            return None
        return value

    def actions(self) -> list[ActionCommandInfo]:
        """The tool calls that name a function."""
        return [a for a in self.action or [] if a.function]


THOUGHT_CHARS = 200
"""The cap on ``thought``: one short sentence is all the plan needs (every token costs time)."""
_THOUGHT = {"type": "string", "maxLength": THOUGHT_CHARS}
_RESULTS = {"anyOf": [{"type": "string", "maxLength": 600}, {"type": "null"}]}
_ID = {"type": "string", "maxLength": 12}
MAX_PLAN_TASKS = 6
"""The most tasks a plan may have: enough for these requests, and a cap on a small model stuck
repeating a task (it stops at the cap)."""


def creation_json_schema(device_ids: list[str] | None = None) -> dict[str, Any]:
    """The JSON schema of a creation answer; ``device_ids`` (when given) are the only valid targets.

    It asks only for what the model must decide: per task ``task_id``, ``target_device_id``,
    ``description``, at most two short ``tips`` and, optionally, the ``device_type`` and
    ``required_capabilities`` the task needs (``plan.plan_problems`` checks the device has them);
    per dependency ``from_task_id`` and ``to_task_id``. The agent fills in names, line ids and
    conditions (``plan.complete_plan``).
    Tasks and dependencies do not forbid other keys, so answers in the reference's full shape
    (``name``, ``line_id``, ``condition_description``...) from stronger models or replay files
    still validate.
    """
    device: dict[str, Any] = {"type": "string", "maxLength": 100}
    if device_ids:
        device = {"type": "string", "enum": sorted(device_ids)}
    task = {
        "type": "object",
        "properties": {
            "task_id": _ID,
            "target_device_id": device,
            "description": {"type": "string", "maxLength": 400},
            "tips": {"type": "array", "items": {"type": "string", "maxLength": 160}, "maxItems": 2},
            # Optional: what the task needs of its device; the plan is checked against it.
            "device_type": {"type": "string", "enum": [*DEVICE_TYPES, *DEVICE_TYPE_ALIASES]},
            "required_capabilities": {
                "type": "array",
                "items": {"type": "string", "maxLength": 40},
                "maxItems": 4,
            },
        },
        "required": ["task_id", "target_device_id", "description"],
    }
    line = {
        "type": "object",
        "properties": {"from_task_id": _ID, "to_task_id": _ID},
        "required": ["from_task_id", "to_task_id"],
    }
    constellation = {
        "type": "object",
        "properties": {
            "tasks": {"type": "array", "items": task, "minItems": 1, "maxItems": MAX_PLAN_TASKS},
            "dependencies": {"type": "array", "items": line, "maxItems": 2 * MAX_PLAN_TASKS},
        },
        "required": ["tasks", "dependencies"],
    }
    return {
        "title": "ConstellationCreationResponse",
        "type": "object",
        "properties": {
            "thought": _THOUGHT,
            "status": {"type": "string", "enum": _STATUS_ENUM},
            "constellation": {"anyOf": [constellation, {"type": "null"}]},
            "results": _RESULTS,
        },
        "required": ["thought", "status", "constellation"],
        "additionalProperties": False,
    }


def _argument_properties(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The union of the tools' parameters with their JSON types (strings capped for the small model)."""
    properties: dict[str, Any] = {}
    for tool in tools:
        for name, spec in ((tool.get("input_schema") or {}).get("properties") or {}).items():
            if name in properties:
                continue
            kinds = [spec.get("type")] if spec.get("type") else [s.get("type") for s in spec.get("anyOf", [])]
            concrete = [k for k in kinds if k not in (None, "null")]
            kind = concrete[0] if concrete else "string"
            prop: dict[str, Any] = {"type": kind}
            if kind == "string":
                prop["maxLength"] = 600
            elif kind == "array":
                prop["items"] = {"type": "string", "maxLength": 600}
            properties[name] = prop
    return properties


def editing_json_schema(tools: list[dict[str, Any]], final: bool = False) -> dict[str, Any]:
    """The JSON schema of an editing answer; calls are limited to ``tools`` (name + input_schema)
    and their arguments to the tools' parameters. ``final``: every task completed and only the
    answer is asked for: status FINISH, no calls, the answer in ``results``."""
    names = sorted({str(t.get("name") or t.get("tool_name")) for t in tools})
    arguments: dict[str, Any] = {"type": "object", "properties": _argument_properties(tools)}
    if arguments["properties"]:
        arguments["additionalProperties"] = False  # no misspelt keys ("description ")
    call = {
        "type": "object",
        "properties": {
            "function": {"type": "string", "enum": names} if names else {"type": "string"},
            "arguments": arguments,
        },
        "required": ["function", "arguments"],
    }
    status: dict[str, Any] = {"type": "string", "enum": _STATUS_ENUM}
    action: dict[str, Any] = {"type": "array", "items": call, "maxItems": 6}
    results: dict[str, Any] = _RESULTS
    if final:
        status = {"type": "string", "enum": ["FINISH", "finish"]}
        action = {"type": "array", "maxItems": 0}
        results = {"type": "string", "minLength": 1, "maxLength": 600}
    return {
        "title": "ConstellationEditingResponse",
        "type": "object",
        "properties": {"thought": _THOUGHT, "status": status, "action": action, "results": results},
        "required": ["thought", "status", "action", *(["results"] if final else [])],
        "additionalProperties": False,
    }
