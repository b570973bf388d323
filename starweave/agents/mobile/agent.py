"""MobileAgent: an Android phone driven through the MobileDataCollector and MobileExecutor tools
(spec C §11.4): single tier, states CONTINUE/FINISH/FAIL (and CONFIRM), four phases."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from starweave.agent import AgentRegistry, BasicAgent, Context
from starweave.agent.guards import GuardState
from starweave.agents.app.dispatch import list_action_tools
from starweave.agents.app.safety import Confirmer, ask_confirmation
from starweave.agents.mobile import tools
from starweave.agents.mobile.guards import mobile_guards
from starweave.agents.mobile.local import MobileProcessorContext
from starweave.agents.mobile.processor import MobileAgentProcessor
from starweave.agents.mobile.prompter import MobileAgentPrompter
from starweave.agents.mobile.response import MobileAgentStatus
from starweave.agents.mobile.states import MobileAgentStateManager
from starweave.agents.mobile.strategies import PendingMobileAction
from starweave.errors import SessionError
from starweave.session.annotation import SetOfMarkAnnotator

#: Earlier steps shown as chat turns.
HISTORY_STEPS = 3


@AgentRegistry.register(agent_name=tools.AGENT_NAME, third_party=True, processor_cls=MobileAgentProcessor)
class MobileAgent(BasicAgent):
    """Looks at the phone's screen (controls, installed apps, screenshots), asks the model, and taps,
    types and launches apps until the request is done.

    Whoever creates it passes ``llm``; optionally ``view`` (a console view), ``confirmer`` (asks the
    user about a sensitive action), ``auto_approve`` (``--yes``), ``is_visual`` (VISUAL_MODE: the
    screenshots go to the model) and whether its guards are on (``guards``, from ``GUARDS`` in
    system.yaml; the CONFIRM check of sensitive actions stays on either way).
    """

    state_manager_cls: ClassVar[type[MobileAgentStateManager]] = MobileAgentStateManager
    status_enum = MobileAgentStatus

    def __init__(
        self,
        name: str = tools.AGENT_NAME,
        main_prompt: str | Path = "mobile_agent.yaml",
        example_prompt: str | Path = "mobile_agent_example.yaml",
        *,
        llm: Any = None,
        view: Any = None,
        confirmer: Confirmer | None = None,
        auto_approve: bool = False,
        is_visual: bool = False,
        guards: bool = True,
    ) -> None:
        super().__init__(name, llm=llm)
        self.is_visual = is_visual
        self.prompter = self.get_prompter(main_prompt, example_prompt)
        self.view: Any = view
        self.confirmer = confirmer
        self.auto_approve = auto_approve
        # Draws the controls' ids on the screenshot (action_step{N}_annotated.png); None: no drawing.
        self.annotator: SetOfMarkAnnotator | None = SetOfMarkAnnotator()
        #: The calls that succeeded, for the prompt's "[Last Success Actions]".
        self.success_actions: list[str] = []
        # The guards (guards.py) and what they remember of the current request.
        self.guard_table = mobile_guards(guards)
        self.guard_state = GuardState()
        self.pending: PendingMobileAction | None = None
        self._tools: list[dict[str, Any]] | None = None
        self.set_state(self.default_state)

    def get_prompter(self, main_prompt: str | Path, example_prompt: str | Path) -> MobileAgentPrompter:
        """The MobileAgent prompter over the given templates."""
        return MobileAgentPrompter(self.is_visual, main_prompt, example_prompt)

    async def action_tools(self, context: Context) -> list[dict[str, Any]]:
        """The MobileExecutor's tools the model may call, as it sees them (read once); SessionError
        when the device offers none of them (never every tool it lists: that could be a shell)."""
        if self._tools is None:
            listed = await list_action_tools(context.command_dispatcher)
            offered = [t for t in listed if t["name"] in tools.ACTION_TOOLS]
            if not offered:
                names = ", ".join(sorted(str(t["name"]) for t in listed)) or "none"
                raise SessionError(
                    f"the MobileAgent's action servers offer none of the MobileExecutor tools "
                    f"({', '.join(tools.ACTION_TOOLS)}); they list: {names}. Check the MobileAgent "
                    "entry of mcp.yaml"
                )
            self._tools = [tools.model_tool(t) for t in offered]
        return self._tools

    def message_constructor(
        self, request: str, action_tools: list[dict[str, Any]], local: MobileProcessorContext
    ) -> list[dict[str, Any]]:
        """The system prompt and the step's user message (spec C §4.4's content order)."""
        latest = self.memory.get_latest_item()
        plan = str(latest.get_value("thought") or "") if latest is not None else ""
        note = str(latest.get_value("note") or "") if latest is not None else ""
        text = self.prompter.user_prompt_construction(
            request,
            plan,
            local.installed_apps or [],
            local.current_controls or [],
            self.success_actions,
            note,
        )
        content = self.prompter.user_content_construction(
            text, local.clean_screenshot_url or "", local.annotated_screenshot_url or ""
        )
        system = self.prompter.system_prompt_construction(action_tools)
        # The last steps as chat turns (what the model saw, what it answered) before this step's
        # message: the small model then sees that its answer was carried out and moves on.
        history: list[dict[str, Any]] = []
        for item in self.memory.content[-HISTORY_STEPS:]:
            shown, answer = item.get_value("prompt_text"), item.get_value("answer_text")
            if shown and answer:
                history += [{"role": "user", "content": shown}, {"role": "assistant", "content": answer}]
        [first, user] = self.prompter.prompt_construction(system, content)
        return [first, *history, user]

    async def confirm(self, action_text: str, reason: str) -> bool:
        """Whether a sensitive action may run (``--yes`` approves; nobody to ask: no)."""
        return await ask_confirmation(self.confirmer, self.auto_approve, True, action_text, reason)
