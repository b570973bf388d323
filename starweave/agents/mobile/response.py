"""The MobileAgent's response schema (spec C §4.4): ``{"thought", "action": {"function",
"arguments", "status"}, "comment"}``.

The JSON schema sent for constrained decoding has one ``action`` branch per action tool (the
LinuxAgent's builder), so the model can only name a MobileExecutor tool with its own parameters, or
no tool at all with FINISH or FAIL. ``comment`` carries the answer for the user at the end.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, Field

from starweave.agents.common import status_checker
from starweave.agents.linux.response import (
    LLM_STATUSES,
    NO_CALL_SCHEMA,
    LinuxAction,
    LinuxAgentResponse,
    tool_action_schema,
)


class MobileAgentStatus(StrEnum):
    """The MobileAgent's statuses: CONTINUE, FINISH, FAIL (spec C §2.4), plus CONFIRM while the
    user decides about a sensitive action."""

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    CONFIRM = "CONFIRM"


Status = Annotated[str, AfterValidator(status_checker(LLM_STATUSES))]


class MobileAction(LinuxAction):
    """The tool the model chose, its arguments, and whether the task goes on (the LinuxAgent's
    action, without PENDING: the MobileAgent asks no questions)."""

    status: Status = Field("CONTINUE", validation_alias=AliasChoices("status", "Status"))


class MobileAgentResponse(LinuxAgentResponse):
    """One parsed MobileAgent answer: ``thought``, ``action`` and ``comment`` (the LinuxAgent's
    answer model, whose ``observation`` and ``result`` the MobileAgent's schema does not ask for)."""

    action: MobileAction


# Every generated token costs the embedded model time; the grammar ends a string at its cap.
THOUGHT_CHARS = 120
COMMENT_CHARS = 300


def response_json_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON schema of a MobileAgent answer, restricted to ``tools`` (name + input_schema dicts)."""
    by_name = {t["name"]: t for t in tools}
    branches = [tool_action_schema(by_name[name]) for name in sorted(by_name)]
    return {
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": THOUGHT_CHARS},
            "action": {"anyOf": [*branches, NO_CALL_SCHEMA]},
            "comment": {"type": "string", "maxLength": COMMENT_CHARS},
        },
        "required": ["thought", "action", "comment"],
        "additionalProperties": False,
    }
