"""Action records (spec D §19): what ran, on which control, with which result."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from starweave.agent import BasicAgent
from starweave.commands import Result, ResultStatus

# Characters of a tool's answer shown to the model per action.
RESULT_PREVIEW = 600


class ActionCommandInfo(BaseModel):
    """One action of a step: the call, its target control and its outcome."""

    function: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    target: dict[str, Any] | None = None
    status: str = "CONTINUE"
    result: Result = Field(default_factory=lambda: Result(status=ResultStatus.NONE))

    @property
    def action_string(self) -> str:
        """``click_input on Button "Export" (id 12)`` (or the call when there is no control).

        The id is marked as one: a small model reading ``[1]Undo`` took the label 1 for the digit 1.
        """
        if self.target:
            kind = str(self.target.get("type") or "")
            label = f'{kind} "{self.target.get("name", "")}"' if kind else f'"{self.target.get("name", "")}"'
            return f"{self.function} on {label} (id {self.target.get('id')})"
        return BasicAgent.get_command_string(self.function, self.arguments)

    def to_representation(self) -> str:
        """The action and its outcome, one line."""
        outcome = self.result.status.value
        if self.result.error:
            outcome += f": {self.result.error}"
        elif self.result.result not in (None, "", {}, []):
            value = self.result.result
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            outcome += f": {text[:RESULT_PREVIEW]}"
        return f"{self.action_string} -> {outcome}"


class ListActionCommandInfo(BaseModel):
    """The actions of one step, in order."""

    actions: list[ActionCommandInfo] = Field(default_factory=list)

    def add_action(self, action: ActionCommandInfo) -> None:
        """Append an action."""
        self.actions.append(action)

    def to_list_of_dicts(self, success_only: bool = False) -> list[dict[str, Any]]:
        """The actions as dicts (only the successful ones with ``success_only``)."""
        return [
            a.model_dump(mode="json")
            for a in self.actions
            if not success_only or a.result.status == ResultStatus.SUCCESS
        ]

    def to_representation(self) -> str:
        """Every action with its outcome, one per line."""
        return "\n".join(a.to_representation() for a in self.actions) or "(no action)"

    def get_results(self) -> list[Result]:
        """The results, in order."""
        return [a.result for a in self.actions]

    def get_function_calls(self) -> list[str]:
        """The calls as strings."""
        return [BasicAgent.get_command_string(a.function, a.arguments) for a in self.actions]

    @property
    def all_succeeded(self) -> bool:
        """True when there was at least one action and every one succeeded."""
        return bool(self.actions) and all(a.result.status == ResultStatus.SUCCESS for a in self.actions)
