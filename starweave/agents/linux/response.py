"""The LinuxAgent's response schema: the JSON object the model must answer with each step.

``{"observation", "thought", "action": {"function", "arguments", "status"}, "result"}``, as in the
reference's customized agents; ``plan`` and ``comment`` are accepted but not requested, because
every generated token costs time on the embedded model. The JSON schema sent for constrained
decoding is built from the device's action tools, so the model can only name tools that exist and
only pass their parameters.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field

from starweave.agents.common import Arguments, argument_schema, call_string, status_checker


class LinuxAgentStatus(StrEnum):
    """The LinuxAgent's statuses: CONTINUE, FINISH, FAIL, plus CONFIRM while a user decides and
    PENDING while the model's question is asked."""

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    CONFIRM = "CONFIRM"
    PENDING = "PENDING"


#: The statuses the schema offers; PENDING (a question in ``result``, no call) only with
#: ASK_QUESTION, so a small model is not tempted to ask when the user wants no questions.
LLM_STATUSES = ("CONTINUE", "FINISH", "FAIL")
Status = Annotated[str, AfterValidator(status_checker((*LLM_STATUSES, LinuxAgentStatus.PENDING.value)))]


class LinuxAction(BaseModel):
    """The tool call the model chose, and whether the task goes on."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    function: str = Field("", validation_alias=AliasChoices("function", "tool", "Function"))
    arguments: Arguments = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "args", "Args", "Arguments")
    )
    status: Status = Field("CONTINUE", validation_alias=AliasChoices("status", "Status"))


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
        return call_string(self.action.function, self.action.arguments)


# Caps on the free-text fields: every generated token costs ~65 ms on the embedded model, and the
# grammar ends a string at its cap, so short caps keep a rambling answer short.
OBSERVATION_CHARS = 80
THOUGHT_CHARS = 120
RESULT_CHARS = 600


def tool_action_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The ``action`` object for one tool: its name, its own parameters (required ones required)."""
    arguments = argument_schema([tool], long_fields=("content",))
    required = [
        name
        for name in (tool.get("input_schema") or {}).get("required") or []
        if name in arguments["properties"]
    ]
    if required:
        arguments["required"] = required
    return {
        "type": "object",
        "properties": {
            "function": {"type": "string", "const": tool["name"]},
            "arguments": arguments,
            "status": {"type": "string", "enum": list(LLM_STATUSES)},
        },
        "required": ["function", "arguments", "status"],
        "additionalProperties": False,
    }


NO_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "function": {"type": "string", "const": ""},
        "arguments": {"type": "object", "properties": {}, "additionalProperties": False},
        "status": {"type": "string", "enum": list(LLM_STATUSES)},
    },
    "required": ["function", "arguments", "status"],
    "additionalProperties": False,
}


def response_json_schema(tools: list[dict[str, Any]], ask: bool = False) -> dict[str, Any]:
    """The JSON schema of a LinuxAgent answer, restricted to ``tools`` (name + input_schema dicts);
    with ``ask`` the "no call" branch may also be PENDING (a question for the user).

    ``action`` is one branch per tool (plus "no call"), so constrained decoding can only pair a tool
    with its own parameters and never leaves out a required one (a small model otherwise writes
    ``read_file`` with a ``command``).
    """
    by_name = {t["name"]: t for t in tools}
    branches = [tool_action_schema(by_name[name]) for name in sorted(by_name)]
    no_call = NO_CALL_SCHEMA
    if ask:
        status = {"type": "string", "enum": [*LLM_STATUSES, LinuxAgentStatus.PENDING.value]}
        no_call = {**NO_CALL_SCHEMA, "properties": {**NO_CALL_SCHEMA["properties"], "status": status}}
    return {
        "type": "object",
        "properties": {
            "observation": {"type": "string", "maxLength": OBSERVATION_CHARS},
            "thought": {"type": "string", "maxLength": THOUGHT_CHARS},
            "action": {"anyOf": [*branches, no_call]},
            "result": {"type": "string", "maxLength": RESULT_CHARS},
        },
        "required": ["observation", "thought", "action", "result"],
        "additionalProperties": False,
    }
