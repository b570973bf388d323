"""The LinuxAgent's response schema: the JSON object the model must answer with each step.

``{"observation", "thought", "action": {"function", "arguments", "status"}, "result"}``, as in the
reference's customized agents; ``plan`` and ``comment`` are accepted but not requested, because
every generated token costs time on the embedded model. The JSON schema sent for constrained
decoding is built from the device's action tools, so the model can only name tools that exist and
only pass their parameters.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from starweave.agent import BasicAgent


class LinuxAgentStatus(StrEnum):
    """The LinuxAgent's statuses: CONTINUE, FINISH, FAIL, plus CONFIRM while a user decides."""

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    CONFIRM = "CONFIRM"


LLM_STATUSES = ("CONTINUE", "FINISH", "FAIL")


class LinuxAction(BaseModel):
    """The tool call the model chose, and whether the task goes on."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    function: str = Field("", validation_alias=AliasChoices("function", "tool", "Function"))
    arguments: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "args", "Args", "Arguments")
    )
    status: str = Field("CONTINUE", validation_alias=AliasChoices("status", "Status"))

    @field_validator("status")
    @classmethod
    def _status(cls, value: str) -> str:
        value = value.strip().upper()
        if value not in LLM_STATUSES:
            raise ValueError(f"status must be one of {', '.join(LLM_STATUSES)}, not {value!r}")
        return value

    @field_validator("arguments", mode="before")
    @classmethod
    def _no_null_arguments(cls, value: Any) -> Any:
        return {} if value is None else value


class LinuxAgentResponse(BaseModel):
    """One parsed LinuxAgent answer."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    observation: str = Field("", validation_alias=AliasChoices("observation", "Observation"))
    thought: str = Field("", validation_alias=AliasChoices("thought", "Thought"))
    action: LinuxAction
    result: str = Field("", validation_alias=AliasChoices("result", "Result"))
    plan: list[str] = Field(default_factory=list, validation_alias=AliasChoices("plan", "Plan"))
    comment: str = Field("", validation_alias=AliasChoices("comment", "Comment"))

    @property
    def status(self) -> str:
        """The status the model chose."""
        return self.action.status

    def call_string(self) -> str:
        """A readable form of the action, e.g. ``execute_command(command='ls')``."""
        if not self.action.function:
            return "(no action)"
        return BasicAgent.get_command_string(self.action.function, self.action.arguments)


_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def _argument_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The union of the tools' parameters, each with its JSON type, none required."""
    properties: dict[str, Any] = {}
    for tool in tools:
        for name, spec in (tool.get("input_schema") or {}).get("properties", {}).items():
            if name in properties:
                continue
            kind = spec.get("type")
            if isinstance(kind, str) and kind in _JSON_TYPES:
                prop: dict[str, Any] = {"type": kind}
            else:
                # Optional parameters come as anyOf [T, null]; take the first concrete type.
                kinds = [s.get("type") for s in spec.get("anyOf", []) if s.get("type") not in (None, "null")]
                prop = {"type": kinds[0] if kinds else "string"}
            if prop["type"] == "string":
                prop["maxLength"] = 2000 if name == "content" else 400
            properties[name] = prop
    return {"type": "object", "properties": properties, "additionalProperties": False}


def response_json_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON schema of a LinuxAgent answer, restricted to ``tools`` (name + input_schema dicts)."""
    names = sorted({t["name"] for t in tools})
    return {
        "type": "object",
        "properties": {
            "observation": {"type": "string", "maxLength": 300},
            "thought": {"type": "string", "maxLength": 300},
            "action": {
                "type": "object",
                "properties": {
                    "function": {"type": "string", "enum": [*names, ""]},
                    "arguments": _argument_schema(tools),
                    "status": {"type": "string", "enum": list(LLM_STATUSES)},
                },
                "required": ["function", "arguments", "status"],
                "additionalProperties": False,
            },
            "result": {"type": "string", "maxLength": 600},
        },
        "required": ["observation", "thought", "action", "result"],
        "additionalProperties": False,
    }
