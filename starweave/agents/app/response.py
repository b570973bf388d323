"""The AppAgent's answer: one action or a list of actions, a status, and notes for the log.

``{"observation", "thought", "action": {...} | [{...}, ...], "status", "plan", "comment", "result",
"save_screenshot": {"save", "reason"}}``. The reference's capitalised keys (``Observation``,
``Function``, ``Args``, ``ControlLabel``...) are accepted too. The JSON schema sent to the model is
built from the application's action tools and, with speculative multi-action on, lets ``action``
be a list (spec D §19).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, model_validator

from starweave.agents.common import (
    Arguments,
    TextList,
    argument_schema,
    call_string,
    status_checker,
)


class AppAgentStatus(StrEnum):
    """The AppAgent's seven statuses (spec C §2.4, D §16)."""

    CONTINUE = "CONTINUE"
    SCREENSHOT = "SCREENSHOT"
    FINISH = "FINISH"
    FAIL = "FAIL"
    PENDING = "PENDING"
    CONFIRM = "CONFIRM"
    ERROR = "ERROR"


#: What the model may answer; ERROR is set by the system only.
LLM_STATUSES = ("CONTINUE", "FINISH", "FAIL", "PENDING", "CONFIRM", "SCREENSHOT")
#: The most actions one speculative answer may carry.
MAX_ACTIONS = 8
Status = Annotated[str, AfterValidator(status_checker(LLM_STATUSES))]


class AppAction(BaseModel):
    """One tool call on the application."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    function: str = Field("", validation_alias=AliasChoices("function", "Function", "tool"))
    arguments: Arguments = Field(
        default_factory=dict, validation_alias=AliasChoices("arguments", "args", "Args", "Arguments")
    )

    @property
    def control_id(self) -> str | None:
        """The label of the control the action targets, if it names one."""
        value = self.arguments.get("id")
        return None if value is None or value == "" else str(value)

    def call_string(self) -> str:
        """``click_input(id='3', name='7')``."""
        return call_string(self.function, self.arguments)


class SaveScreenshot(BaseModel):
    """Whether the model wants this step's screenshot kept on the Blackboard."""

    model_config = ConfigDict(extra="ignore")

    save: bool = False
    reason: str = ""


class AppAgentResponse(BaseModel):
    """One parsed AppAgent answer; :attr:`actions` is always a list (empty: no action)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    observation: str = Field("", validation_alias=AliasChoices("observation", "Observation"))
    thought: str = Field("", validation_alias=AliasChoices("thought", "Thought"))
    actions: list[AppAction] = Field(default_factory=list)
    status: Status = Field("CONTINUE", validation_alias=AliasChoices("status", "Status"))
    plan: TextList = Field(default_factory=list, validation_alias=AliasChoices("plan", "Plan"))
    comment: str = Field("", validation_alias=AliasChoices("comment", "Comment"))
    result: str = Field("", validation_alias=AliasChoices("result", "Result"))
    save_screenshot: SaveScreenshot = Field(
        default_factory=SaveScreenshot, validation_alias=AliasChoices("save_screenshot", "SaveScreenshot")
    )

    @model_validator(mode="before")
    @classmethod
    def _gather_actions(cls, data: Any) -> Any:
        """Accept ``action`` (one or a list), ``actions``, or the reference's flat Function/Args."""
        if not isinstance(data, dict) or "actions" in data:
            return data
        data = dict(data)
        raw = data.pop("action", data.pop("Action", None))
        if raw is None and ("Function" in data or "function" in data):
            raw = {"function": data.get("Function", data.get("function")), "arguments": data.get("Args")}
        if raw is None:
            raw = []
        items = raw if isinstance(raw, list) else [raw]
        data["actions"] = [
            item for item in items if not (isinstance(item, dict) and not item.get("function"))
        ]
        return data

    def call_string(self) -> str:
        """All actions, readable, separated by ``; ``."""
        return "; ".join(a.call_string() for a in self.actions) or "(no action)"

    def to_log(self) -> dict[str, Any]:
        """The answer as the model gave it (for the history and response.log)."""
        return {
            "observation": self.observation,
            "thought": self.thought,
            "action": [a.model_dump() for a in self.actions],
            "status": self.status,
            "plan": self.plan,
            "comment": self.comment,
            "result": self.result,
        }


def control_arguments(tools: list[dict[str, Any]], control_ids: list[str] | None) -> dict[str, Any]:
    """The arguments' schema for a text-only model: ``name`` before ``id``, and ``id`` one of ``control_ids``.

    Constrained decoding writes the properties in the schema's order, so the model names the control
    first and then picks the id that goes with that name, instead of writing an id (which a small
    model confuses with a control's text, the label 1 for the digit 1) and naming it afterwards.
    """
    schema = argument_schema(tools)
    properties: dict[str, Any] = schema["properties"]
    first = {k: properties[k] for k in ("name", "id") if k in properties}
    if "id" in first and control_ids:
        first["id"] = {"type": "string", "enum": list(control_ids)}
    schema["properties"] = {**first, **{k: v for k, v in properties.items() if k not in first}}
    return schema


def response_json_schema(
    tools: list[dict[str, Any]],
    multi_action: bool,
    text_only: bool = False,
    control_ids: list[str] | None = None,
    require_action: bool = False,
    statuses: tuple[str, ...] = LLM_STATUSES,
) -> dict[str, Any]:
    """The JSON schema of an AppAgent answer over ``tools``; ``action`` is a list when ``multi_action``.

    For a text-only model the arguments name the control before its id, and the id is one of the
    ``control_ids`` listed in the prompt (see :func:`control_arguments`). With ``require_action`` the
    answer must run a tool (no empty function, no empty list); ``statuses`` are the ones it may give.
    """
    names = sorted({str(t["name"]) for t in tools})
    action: dict[str, Any] = {
        "type": "object",
        "properties": {
            "function": {"type": "string", "enum": names if require_action and names else [*names, ""]},
            "arguments": control_arguments(tools, control_ids) if text_only else argument_schema(tools),
        },
        "required": ["function", "arguments"],
        "additionalProperties": False,
    }
    action_schema: dict[str, Any] = (
        {"type": "array", "items": action, "maxItems": MAX_ACTIONS} if multi_action else action
    )
    if multi_action and require_action:
        action_schema["minItems"] = 1
    return {
        "type": "object",
        "properties": {
            "observation": {"type": "string", "maxLength": 400},
            "thought": {"type": "string", "maxLength": 400},
            "action": action_schema,
            "status": {"type": "string", "enum": list(statuses)},
            "comment": {"type": "string", "maxLength": 400},
            "result": {"type": "string", "maxLength": 800},
            "plan": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 10},
            "save_screenshot": {
                "type": "object",
                "properties": {"save": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 200}},
                "additionalProperties": False,
            },
        },
        "required": ["observation", "thought", "action", "status", "result"],
        "additionalProperties": False,
    }
