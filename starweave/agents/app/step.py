"""What the AppAgent's guards (guards.py, finish_guards.py) see of a step, and the facts they share
in the subtask's :class:`~starweave.agent.guards.GuardState`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agent.guards import GuardState
from starweave.agent.memory import MemoryItem
from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.effect import Fingerprint, fingerprint
from starweave.agents.app.execution import fetch_controls
from starweave.agents.app.response import AppAction, AppAgentStatus
from starweave.errors import ToolError

CONTINUE, FINISH = AppAgentStatus.CONTINUE.value, AppAgentStatus.FINISH.value
#: Facts the guards share in the subtask's GuardState.
LAST_GIVEN, LAST_RUN, RUN_WINDOW = "last_given", "last_run", "run_window"
MUST_ACT, WITHHELD, REFUSED_BY, VERIFIED = "must_act", "withheld", "refused_by", "verified"
#: Counts: the same call in a row.
IN_A_ROW = "in_a_row"


@dataclass
class WindowNow:
    """The window read again at a FINISH: its controls with their texts, and its title."""

    controls: list[Control]
    title: str


@dataclass
class AppStep:
    """What the guards see of one step: the answer, the controls the model saw, and once the
    actions ran (``info``), their outcome; ``memory`` holds the subtask's earlier steps."""

    subtask: str
    status: str
    actions: list[AppAction]
    call: str
    result: str
    controls: list[Control]
    memory: list[MemoryItem]
    text_only: bool = True
    tools: list[dict[str, Any]] = field(default_factory=list)
    dispatcher: Any = None
    info: ListActionCommandInfo | None = None
    _window: WindowNow | None = field(default=None, init=False, repr=False)
    _read: bool = field(default=False, init=False, repr=False)

    @property
    def settling(self) -> bool:
        """Whether this is the FINISH check (the step's actions have run)."""
        return self.info is not None

    @property
    def window(self) -> Fingerprint:
        """The texts of the window as the model saw it this step."""
        return fingerprint(self.controls)

    def done_actions(self) -> list[dict[str, Any]]:
        """The subtask's actions so far, this step's included (``ActionCommandInfo`` dicts)."""
        earlier = [a for item in self.memory for a in item.get_value("action") or []]
        return [*earlier, *(self.info.to_list_of_dicts() if self.info else [])]

    def tool_names(self) -> set[str]:
        """The application's action tools."""
        return {str(t.get("name")) for t in self.tools}

    async def window_now(self) -> WindowNow | None:
        """The window as it is now (read once per step); None when it is gone."""
        if self._read:
            return self._window
        self._read = True
        try:
            controls = await fetch_controls(self.dispatcher, with_values=True)
        except ToolError:
            return None  # the last action may have closed the window: nothing to check against
        window = await run_one(
            self.dispatcher, "get_app_window_info", {"field_list": ["control_text"]}, "data_collection"
        )
        payload = window.result if window.ok and isinstance(window.result, dict) else {}
        self._window = WindowNow(controls, str(payload.get("control_text") or ""))
        return self._window


def insisting(state: GuardState, name: str) -> bool:
    """Whether the previous step was refused by the guard ``name`` (the model insists)."""
    return state.refused_last and state.facts.get(REFUSED_BY) == name
