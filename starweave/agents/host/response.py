"""The HostAgent's answer (seed 002 ``HostAgentResponse``) and the JSON schema the model must follow.

The model picks a target with ``select_application_window`` and ``{"id": ...}`` (an open window or
a third-party agent such as the LinuxAgent), launches or closes applications with the
HostUIExecutor's other tools, and hands the subtask over with status ASSIGN.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from starweave.agent import BasicAgent
from starweave.agents.app.response import argument_schema


class HostAgentStatus(StrEnum):
    """The HostAgent's seven statuses."""

    ERROR = "ERROR"
    FINISH = "FINISH"
    CONTINUE = "CONTINUE"
    ASSIGN = "ASSIGN"
    FAIL = "FAIL"
    PENDING = "PENDING"
    CONFIRM = "CONFIRM"


#: What the model may answer; ERROR is set by the system.
LLM_STATUSES = ("CONTINUE", "ASSIGN", "FINISH", "FAIL", "PENDING", "CONFIRM")
SELECT_APPLICATION_COMMAND = "select_application_window"


class HostAgentResponse(BaseModel):
    """One parsed HostAgent answer."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    observation: str = Field(validation_alias=AliasChoices("observation", "Observation"))
    thought: str = Field(validation_alias=AliasChoices("thought", "Thought"))
    current_subtask: str = Field(
        "", validation_alias=AliasChoices("current_subtask", "Current Sub-Task", "CurrentSubtask", "subtask")
    )
    message: str = Field("", validation_alias=AliasChoices("message", "Message"))
    control_label: str = Field("", validation_alias=AliasChoices("control_label", "ControlLabel"))
    control_text: str = Field("", validation_alias=AliasChoices("control_text", "ControlText"))
    plan: list[str] = Field(default_factory=list, validation_alias=AliasChoices("plan", "Plan"))
    status: str = Field(validation_alias=AliasChoices("status", "Status"))
    comment: str = Field("", validation_alias=AliasChoices("comment", "Comment"))
    questions: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("questions", "Questions")
    )
    function: str = Field("", validation_alias=AliasChoices("function", "Function"))
    arguments: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "Args", "args")
    )
    result: str = Field("", validation_alias=AliasChoices("result", "Result"))

    @field_validator("status")
    @classmethod
    def _status(cls, value: str) -> str:
        value = value.strip().upper()
        if value not in LLM_STATUSES:
            raise ValueError(f"status must be one of {', '.join(LLM_STATUSES)}, not {value!r}")
        return value

    @field_validator("arguments", mode="before")
    @classmethod
    def _no_null(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("plan", "questions", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    def call_string(self) -> str:
        """The call, readable."""
        return (
            BasicAgent.get_command_string(self.function, self.arguments) if self.function else "(no action)"
        )


def response_json_schema(tools: list[dict[str, Any]], target_ids: list[str]) -> dict[str, Any]:
    """The schema of a HostAgent answer: functions from ``tools``, ``id`` from ``target_ids``."""
    names = sorted({str(t["name"]) for t in tools} | {SELECT_APPLICATION_COMMAND})
    args = argument_schema(tools)
    args["properties"]["id"] = {"type": "string", "enum": target_ids} if target_ids else {"type": "string"}
    text = {"type": "string", "maxLength": 400}
    return {
        "type": "object",
        "properties": {
            "observation": text,
            "thought": text,
            "current_subtask": text,
            "message": text,
            "plan": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 10},
            "status": {"type": "string", "enum": list(LLM_STATUSES)},
            "questions": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 3},
            "function": {"type": "string", "enum": [*names, ""]},
            "arguments": args,
            "result": {"type": "string", "maxLength": 800},
        },
        "required": [
            "observation",
            "thought",
            "current_subtask",
            "status",
            "function",
            "arguments",
            "result",
        ],
        "additionalProperties": False,
    }
