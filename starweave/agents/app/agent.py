"""AppAgent: operates one application window for the HostAgent (spec C §11.2, D §16)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from starweave.agent import AgentRegistry, BasicAgent, Context, ContextNames
from starweave.agent.guards import GuardState
from starweave.agents.app.controls import Control, controls_prompt
from starweave.agents.app.dispatch import RoutedDispatcher, list_action_tools
from starweave.agents.app.guards import app_guards
from starweave.agents.app.processor import AppAgentProcessor
from starweave.agents.app.prompter import (
    AppAgentPrompter,
    blackboard_text,
    finished_work,
    steps_text,
)
from starweave.agents.app.response import AppAction, AppAgentResponse, AppAgentStatus
from starweave.agents.app.safety import Confirmer, ask_confirmation
from starweave.agents.app.states import AppAgentStateManager
from starweave.agents.app.step import VERIFIED
from starweave.agents.app.verify import acted
from starweave.agents.app.vision import Image, VisualOptions
from starweave.agents.common import Asker, ask_questions
from starweave.knowledge.retrieval import KnowledgeSlots
from starweave.tools.desktop.detect import ControlDetector

logger = logging.getLogger(__name__)


class Annotator(Protocol):
    """Draws set-of-mark boxes: ``await annotator(clean_png, controls, out_png, origin=..., selected=...)``.

    ``origin`` is the window's screen rectangle ``{x, y, width, height}`` (the control rectangles are
    on screen, the screenshot shows the window); ``selected`` is the label to highlight.
    """

    def __call__(
        self,
        clean_png: Path,
        controls: list[Control],
        out_png: Path,
        *,
        origin: dict[str, Any] | None = None,
        selected: str | None = None,
    ) -> Awaitable[Path]: ...


DEFAULT_HISTORY_KEYS = [
    "step",
    "agent_name",
    "application",
    "subtask",
    "observation",
    "thought",
    "call",
    "status",
    "result",
]


@dataclass(frozen=True)
class SubtaskOutcome:
    """How one subtask of this AppAgent ended (the HostAgent reads it to spot a subtask it repeats)."""

    subtask: str
    status: str
    result: str
    #: An action that may change the application succeeded during the subtask.
    acted: bool
    #: The FINISH result claimed something checkable, and the window showed it.
    verified: bool


@dataclass
class PendingActions:
    """Actions held back for the user's approval (status CONFIRM)."""

    actions: list[AppAction]
    reason: str
    status: str
    result: str
    planned: dict[str, Control] = field(default_factory=dict)


@AgentRegistry.register(agent_name="AppAgent", processor_cls=AppAgentProcessor)
@AgentRegistry.register(agent_name="app", processor_cls=AppAgentProcessor)
class AppAgent(BasicAgent):
    """Reads a window's controls, asks the model, and clicks, types and reads until the subtask is done.

    The HostAgent creates it (or reuses it for the same application), shares its Blackboard and
    sets ``llm``; the options below are copied from the host: ``confirmer``/``auto_approve``/
    ``safe_guard`` (the CONFIRM safeguard, on by default), ``action_sequence`` (speculative
    multi-action), ``asker`` (PENDING questions), ``annotator`` (set-of-mark screenshots).
    ``guards`` (``GUARDS`` in system.yaml) turns the step guards (guards.py) on or off.
    """

    state_manager_cls: ClassVar[type[AppAgentStateManager]] = AppAgentStateManager
    status_enum = AppAgentStatus
    #: The ``mcp.yaml`` agent key of AppAgent tool sets.
    mcp_agent_name = "AppAgent"

    def __init__(
        self,
        name: str = "AppAgent",
        process_name: str = "",
        app_root_name: str = "",
        is_visual: bool = False,
        main_prompt: str | Path = "app_agent.yaml",
        example_prompt: str | Path = "app_agent_example.yaml",
        mode: str = "normal",
        guards: bool = True,
    ) -> None:
        super().__init__(name)
        self.process_name = process_name
        self.app_root_name = app_root_name
        self.mode = mode
        self.prompter = self.get_prompter(is_visual, main_prompt, example_prompt)
        self.view: Any = None
        self.confirmer: Confirmer | None = None
        self.asker: Asker | None = None
        self.annotator: Annotator | None = None
        # Optional visual control detector (spec D §17); none is needed.
        self.detector: ControlDetector | None = None
        self.auto_approve = False
        self.safe_guard = True
        self.action_sequence = False
        # After the UI changed under a speculative sequence: this many steps plan one action each.
        self.fallback_steps = 2
        self.single_action_steps = 0
        self.save_full_screen = False
        self.save_ui_tree = False
        # What a visual model sees (VISUAL_MODE); the previous step's selected-control screenshot.
        self.visual = VisualOptions()
        self.last_selected_screenshot = ""
        self.history_keys: list[str] = list(DEFAULT_HISTORY_KEYS)
        self.subtask = ""
        self.host_message = ""
        self.subtask_start = 0
        self.llm_calls = 0
        self.validations = 0
        self.pending: PendingActions | None = None
        self.outcomes: list[SubtaskOutcome] = []
        self.blackboard_start: int | None = None
        # The guards (guards.py) and what they remember of the current subtask.
        self.guard_table = app_guards(guards)
        self.guard_state = GuardState()
        self._tools: list[dict[str, Any]] | None = None
        # What retrieval found for the current subtask (rag.yaml); the HostAgent sets the retriever.
        self.knowledge = KnowledgeSlots(None, "app")
        self.set_state(self.default_state)

    def get_prompter(
        self, is_visual: bool, main_prompt: str | Path, example_prompt: str | Path
    ) -> AppAgentPrompter:
        """The AppAgent prompter over the given templates."""
        return AppAgentPrompter(is_visual, main_prompt, example_prompt)

    # -- tools --------------------------------------------------------------------------------
    def dispatcher(self, context: Context) -> RoutedDispatcher:
        """The session's dispatcher, routed to this application's tool set."""
        return RoutedDispatcher(
            context.command_dispatcher,
            self.mcp_agent_name,
            self.process_name or None,
            self.app_root_name or None,
        )

    async def action_tools(self, context: Context) -> list[dict[str, Any]]:
        """The application's action tools (GUI and API), read once."""
        if self._tools is None:
            self._tools = await list_action_tools(self.dispatcher(context))
        return self._tools

    @property
    def known_tools(self) -> list[dict[str, Any]]:
        """The action tools read so far ([] before the first step)."""
        return self._tools or []

    # -- subtasks -----------------------------------------------------------------------------
    def begin_subtask(self, subtask: str, host_message: str = "") -> None:
        """Start a new subtask (the host assigns one): fresh status, history from here on."""
        self.subtask = subtask
        self.host_message = host_message
        self.subtask_start = len(self.memory.content)
        self.single_action_steps = 0
        self.pending = None
        self.last_selected_screenshot = ""
        self.blackboard_start = len(self.blackboard.trajectories)
        # A fresh state even for the same subtask assigned again: its steps start afresh too.
        self.guard_state = GuardState()
        self.guard_state.begin(subtask)
        self.status = AppAgentStatus.CONTINUE.value

    @property
    def check_control_names(self) -> bool:
        """Refuse an action whose control name and id disagree: a text-only model picks by name."""
        return self.prompter.text_only

    def subtask_actions(self) -> list[dict[str, Any]]:
        """The actions of this subtask's steps so far (``ActionCommandInfo`` dicts, with results)."""
        return [
            a for item in self.memory.content[self.subtask_start :] for a in item.get_value("action") or []
        ]

    def archive_subtask(self, context: Context | None, status: str) -> None:
        """Write the subtask's outcome on the Blackboard and in the context's previous subtasks."""
        latest = self.memory.get_latest_item()
        result = str(latest.get_value("result") or "") if latest is not None else ""
        if not result and context is not None and status != AppAgentStatus.FINISH.value:
            result = str(context.get(ContextNames.ERROR_MESSAGE) or "")
        record = {
            "agent_name": self.name,
            "application": self.app_root_name,
            "subtask": self.subtask,
            "status": status,
            "result": result,
        }
        self.blackboard.add_trajectories(record)
        verified = status == AppAgentStatus.FINISH.value and bool(self.guard_state.facts.get(VERIFIED))
        self.outcomes.append(
            SubtaskOutcome(self.subtask, status, result, acted(self.subtask_actions()), verified)
        )
        if context is not None:
            previous = list(context.get(ContextNames.PREVIOUS_SUBTASKS) or [])
            previous.append(record)
            context.set(ContextNames.PREVIOUS_SUBTASKS, previous)

    # -- speculative multi-action -------------------------------------------------------------
    @property
    def multi_action_enabled(self) -> bool:
        """True when the model may plan several actions this step."""
        return self.action_sequence and self.single_action_steps == 0

    def start_fallback(self) -> None:
        """The UI changed under a sequence: plan one action per step for ``fallback_steps`` steps."""
        self.single_action_steps = self.fallback_steps

    def end_fallback_step(self) -> None:
        """One single-action step done."""
        self.single_action_steps = max(0, self.single_action_steps - 1)

    # -- prompt -------------------------------------------------------------------------------
    def message_constructor(
        self,
        request: str,
        tools: list[dict[str, Any]],
        controls: list[Control],
        multi_action: bool = False,
        screenshot_path: str = "",
        images: list[Image] | None = None,
        effect: str = "",
    ) -> list[dict[str, Any]]:
        """The system prompt and one user message (controls as text, Blackboard, earlier steps; for a
        visual model the step's ``images`` first); ``effect`` says what the last action changed."""
        system = self.prompter.system_prompt_construction(
            tools, multi_action, self.knowledge.additional_examples()
        )
        knowledge = self.knowledge.knowledge_text()
        notes = [effect]
        if self.action_sequence and not multi_action:
            notes.append("The window changed during your last plan: give one action this step.")
        note = "\n".join(n for n in notes if n)
        if self.prompter.text_only:
            first = {
                "user_request": request,
                "subtask": self.subtask,
                "current_application": self.app_root_name or self.process_name,
                "host_message": self.host_message,
                "blackboard": finished_work(self.blackboard, self.blackboard_start),
                "knowledge": knowledge,
            }
            steps = self.memory.content[self.subtask_start :]
            return self.prompter.text_messages(
                system, first, steps, controls_prompt(controls, text_only=True), note
            )
        user = self.prompter.user_content_construction(
            images or [],
            user_request=request,
            subtask=self.subtask,
            current_application=self.app_root_name or self.process_name,
            host_message=self.host_message,
            control_info=controls_prompt(controls),
            blackboard_prompt=blackboard_text(self.blackboard, upto=self.blackboard_start),
            previous_steps=steps_text(self.memory.content[self.subtask_start :]),
            screenshot_note=screenshot_path,
            note=note,
            knowledge=knowledge,
        )
        return self.prompter.prompt_construction(system, user)

    async def context_provision(self, request: str = "", context: Context | None = None) -> None:
        """Retrieve the help documents (this application's first) and examples for the current
        subtask (or ``request``), once per subtask; nothing when no rag source is on."""
        await self.knowledge.provide(self.subtask or request, self.app_root_name or self.process_name or None)

    # -- PENDING and CONFIRM ------------------------------------------------------------------
    async def ask_user(self) -> None:
        """Ask the last step's question; the answer (or its absence) goes on the Blackboard."""
        latest = self.memory.get_latest_item()
        question = ""
        if latest is not None:
            response = latest.get_value("response") or {}
            question = str(response.get("comment") or response.get("result") or response.get("thought") or "")
        await ask_questions(self.asker, self.blackboard, [question])

    def hold_for_confirmation(
        self, actions: list[AppAction], reason: str, parsed: AppAgentResponse, planned: dict[str, Control]
    ) -> None:
        """Keep ``actions`` (and the controls the model saw) until the user decides."""
        status = (
            parsed.status if parsed.status != AppAgentStatus.CONFIRM.value else AppAgentStatus.CONTINUE.value
        )
        self.pending = PendingActions(list(actions), reason, status, parsed.result, dict(planned))

    async def confirm(self, action_text: str, reason: str) -> bool:
        """Whether a sensitive action may run."""
        return await ask_confirmation(self.confirmer, self.auto_approve, self.safe_guard, action_text, reason)
