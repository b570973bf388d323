"""The HostAgent's answer (seed 002 ``HostAgentResponse``) and the JSON schema the model must follow.

The model picks a target with ``select_application_window`` and ``{"id": ...}`` (an open window or
a third-party agent such as the LinuxAgent), launches or closes applications with the
HostUIExecutor's other tools, and hands the subtask over with status ASSIGN.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field

from starweave.agents.common import Arguments, TextList, argument_schema, call_string, status_checker


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
Status = Annotated[str, AfterValidator(status_checker(LLM_STATUSES))]


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
    plan: TextList = Field(default_factory=list, validation_alias=AliasChoices("plan", "Plan"))
    status: Status = Field(validation_alias=AliasChoices("status", "Status"))
    comment: str = Field("", validation_alias=AliasChoices("comment", "Comment"))
    questions: TextList = Field(default_factory=list, validation_alias=AliasChoices("questions", "Questions"))
    function: str = Field("", validation_alias=AliasChoices("function", "Function"))
    arguments: Arguments = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "Args", "args")
    )
    result: str = Field("", validation_alias=AliasChoices("result", "Result"))

    def call_string(self) -> str:
        """The call, readable."""
        return call_string(self.function, self.arguments)


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
