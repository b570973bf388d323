"""HostAgent: splits the request into subtasks and hands each to an AppAgent or a third-party agent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from starweave.agent import AgentFactory, AgentRegistry, BasicAgent, Context, ContextNames
from starweave.agent.guards import GuardState
from starweave.agents.app.agent import AppAgent, SubtaskOutcome
from starweave.agents.app.dispatch import RoutedDispatcher, list_action_tools, run_one
from starweave.agents.app.prompter import blackboard_text
from starweave.agents.app.safety import Confirmer
from starweave.agents.app.vision import Image, VisualOptions
from starweave.agents.common import Asker, ask_questions
from starweave.agents.host.guards import host_guards
from starweave.agents.host.processor import HostAgentProcessor
from starweave.agents.host.prompter import HostAgentPrompter, host_steps_text
from starweave.agents.host.repeats import third_party_outcomes
from starweave.agents.host.response import SELECT_APPLICATION_COMMAND, HostAgentResponse, HostAgentStatus
from starweave.agents.host.states import HostAgentStateManager
from starweave.agents.host.targets import TargetInfo, TargetKind
from starweave.agents.host.third_party import run_third_party
from starweave.commands import Result, ResultStatus
from starweave.errors import AgentError
from starweave.knowledge.retrieval import KnowledgeSlots, Retriever

DEFAULT_HISTORY_KEYS = [
    "step",
    "agent_name",
    "observation",
    "thought",
    "current_subtask",
    "call",
    "status",
    "result",
]
#: Options the HostAgent copies onto every AppAgent it creates.
APP_OPTIONS = (
    "confirmer",
    "auto_approve",
    "safe_guard",
    "asker",
    "annotator",
    "action_sequence",
    "fallback_steps",
    "save_full_screen",
    "save_ui_tree",
    "view",
    "visual",
)


@dataclass
class Selection:
    """The target chosen by the last ``select_application_window``."""

    target_id: str
    name: str
    root_name: str
    process_name: str
    third_party: bool


@dataclass
class HeldAction:
    """A sensitive host action waiting for the user (status CONFIRM)."""

    response: HostAgentResponse
    reason: str


@AgentRegistry.register(agent_name="HostAgent", processor_cls=HostAgentProcessor)
@AgentRegistry.register(agent_name="host", processor_cls=HostAgentProcessor)
class HostAgent(BasicAgent):
    """Lists the desktop's windows (and third-party agents), picks a target per subtask, hands over.

    Whoever creates it sets ``llm`` (and optionally ``app_llm`` for the AppAgents), and may set
    ``third_party_agents`` (registered agent names, e.g. ``["LinuxAgent"]``) with their
    introductions, ``confirmer``/``auto_approve``/``safe_guard`` (CONFIRM safeguard, on by default),
    ``asker`` (PENDING), ``action_sequence`` (speculative multi-action for the AppAgents),
    ``annotator`` and ``view``. What the models see is given at construction: ``is_visual`` (the
    host's model), ``app_visual`` (the AppAgents') and ``visual`` (their screenshot options), and
    the ``retriever`` of help documents and examples (rag.yaml), shared with its sub-agents, and
    whether its guards are on (``guards``, from ``GUARDS`` in system.yaml).
    """

    state_manager_cls: ClassVar[type[HostAgentStateManager]] = HostAgentStateManager
    status_enum = HostAgentStatus
    mcp_agent_name = "HostAgent"

    def __init__(
        self,
        name: str = "HostAgent",
        is_visual: bool = False,
        main_prompt: str | Path = "host_agent.yaml",
        example_prompt: str | Path = "host_agent_example.yaml",
        *,
        llm: Any = None,
        app_llm: Any = None,
        view: Any = None,
        confirmer: Confirmer | None = None,
        auto_approve: bool = False,
        app_visual: bool = False,
        visual: VisualOptions | None = None,
        retriever: Retriever | None = None,
        guards: bool = True,
    ) -> None:
        super().__init__(name, llm=llm)
        self.prompter = self.get_prompter(is_visual, main_prompt, example_prompt)
        self.agent_factory = AgentFactory()
        self.appagent_dict: dict[str, BasicAgent] = {}
        self._active_appagent: AppAgent | None = None
        # The AppAgents' model; None: they use the host's.
        self.app_llm: Any = app_llm
        # Whether the AppAgents' model is visual (VISUAL_MODE of APP_AGENT), and what it is shown.
        self.app_visual = app_visual
        self.visual = visual or VisualOptions()
        self.view: Any = view
        self.confirmer: Confirmer | None = confirmer
        self.asker: Asker | None = None
        # ASK_QUESTION (set with the asker): passed on to third-party agents made on first use.
        self.offer_questions = False
        self.annotator: Any = None
        self.auto_approve = auto_approve
        self.safe_guard = True
        # The AppAgents' step guards (GUARDS in system.yaml): on, or off for a strong model.
        self.app_guards = True
        self.action_sequence = False
        self.fallback_steps = 2
        self.save_full_screen = False
        self.save_ui_tree = False
        self.third_party_agents: list[str] = []
        self.third_party_introductions: dict[str, str] = {}
        self.third_party_max_steps = 20
        self.history_keys: list[str] = list(DEFAULT_HISTORY_KEYS)
        self.selection: Selection | None = None
        self.held: HeldAction | None = None
        # The guards (guards.py) and what they remember of the current request.
        self.guard_table = host_guards(guards)
        self.guard_state = GuardState()
        self.llm_calls = 0
        self._tools: list[dict[str, Any]] | None = None
        # What retrieval found for the request (rag.yaml); its AppAgents retrieve for their subtasks.
        self.knowledge = KnowledgeSlots(retriever, "host")
        self.set_state(self.default_state)

    def get_prompter(
        self, is_visual: bool, main_prompt: str | Path, example_prompt: str | Path
    ) -> HostAgentPrompter:
        """The HostAgent prompter over the given templates."""
        return HostAgentPrompter(is_visual, main_prompt, example_prompt)

    # -- tools --------------------------------------------------------------------------------
    def dispatcher(self, context: Context) -> RoutedDispatcher:
        """The session's dispatcher, routed to the HostAgent's tool set."""
        return RoutedDispatcher(context.command_dispatcher, self.mcp_agent_name)

    async def action_tools(self, context: Context) -> list[dict[str, Any]]:
        """The host's action tools (read once)."""
        if self._tools is None:
            self._tools = await list_action_tools(self.dispatcher(context))
        return self._tools

    def message_constructor(
        self,
        request: str,
        targets: list[TargetInfo],
        tools: list[dict[str, Any]],
        previous_subtasks: list[dict[str, Any]],
        screenshot_path: str = "",
        images: list[Image] | None = None,
    ) -> list[dict[str, Any]]:
        """System prompt and one user message (for a visual model the desktop screenshot first)."""
        intros = {
            n: self.third_party_introductions.get(n, "a third-party agent") for n in self.third_party_agents
        }
        system = self.prompter.system_prompt_construction(tools, intros, self.knowledge.additional_examples())
        user = self.prompter.user_content_construction(
            images or [],
            user_request=request,
            targets=targets,
            previous_subtasks=previous_subtasks,
            # A text-only model reads the subtasks' outcomes once, in their own list.
            blackboard_prompt=blackboard_text(self.blackboard, trajectories=self.prompter.is_visual),
            previous_steps=host_steps_text(self.memory.content),
            screenshot_note=screenshot_path,
            knowledge=self.knowledge.knowledge_text(),
        )
        return self.prompter.prompt_construction(system, user)

    async def context_provision(self, request: str = "", context: Context | None = None) -> None:
        """Retrieve the help documents and examples for ``request`` (once per request; nothing when
        no rag source is on)."""
        await self.knowledge.provide(request)

    # -- selection and handoff ----------------------------------------------------------------
    async def select_target(self, target: TargetInfo, context: Context) -> Result:
        """Select a window (through HostUIExecutor) or a third-party agent; remember the choice."""
        if target.kind == TargetKind.THIRD_PARTY_AGENT.value:
            self.selection = Selection(target.id, target.name, target.name, target.name, True)
            return Result(
                status=ResultStatus.SUCCESS,
                result={"id": target.id, "name": target.name, "type": "third_party_agent"},
            )
        result = await run_one(
            self.dispatcher(context),
            SELECT_APPLICATION_COMMAND,
            {"id": target.id, "name": target.name},
            "action",
        )
        if not result.ok:
            return result
        payload = result.result if isinstance(result.result, dict) else {}
        raw_window = payload.get("window_info")
        window: dict[str, Any] = raw_window if isinstance(raw_window, dict) else {}
        root = str(payload.get("root_name") or target.name)
        # The HostUIExecutor's root_name is the process name (mcp.yaml's key); a target's type is the
        # window's control type on the real desktop, so it only stands in when neither is given.
        process = str(window.get("process_name") or payload.get("root_name") or target.type or root)
        self.selection = Selection(target.id, target.name, root, process, False)
        context.set(ContextNames.APPLICATION_ROOT_NAME, root)
        context.set(ContextNames.APPLICATION_PROCESS_NAME, process)
        context.set(ContextNames.APPLICATION_WINDOW_INFO, window)
        return result

    def get_or_create_appagent(self, root_name: str, process_name: str) -> AppAgent:
        """The AppAgent of this application: cached by ``root/process``, sharing the Blackboard."""
        key = f"{root_name}/{process_name}"
        agent = self.appagent_dict.get(key)
        if not isinstance(agent, AppAgent):
            created = self.agent_factory.create_agent(
                "app", name=f"AppAgent/{root_name}", process_name=process_name, app_root_name=root_name
            )
            if not isinstance(created, AppAgent):
                raise AgentError(f"agent 'app' is registered as {type(created).__name__}, not AppAgent")
            agent = created
            self.appagent_dict[key] = agent
        agent.host = self
        agent.blackboard = self.blackboard
        agent.knowledge.retriever = self.knowledge.retriever
        agent.llm = self.app_llm if self.app_llm is not None else self.llm
        agent.prompter.is_visual = self.app_visual
        for option in APP_OPTIONS:
            setattr(agent, option, getattr(self, option))
        agent.guard_table.enabled = self.app_guards
        return agent

    def target_history(self, context: Context) -> tuple[str, list[SubtaskOutcome]]:
        """The selected target's name and its earlier subtasks (what the ``repeat`` and ``retry``
        guards compare a new subtask with); ``("", [])`` when nothing is selected."""
        selection = self.selection
        if selection is None:
            return "", []
        if selection.third_party:
            records = context.get(ContextNames.PREVIOUS_SUBTASKS) or []
            return selection.name, third_party_outcomes(records, selection.name)
        app = self.appagent_dict.get(f"{selection.root_name}/{selection.process_name}")
        return selection.root_name, list(app.outcomes) if isinstance(app, AppAgent) else []

    def get_active_appagent(self) -> AppAgent | None:
        """The AppAgent the last ASSIGN handed over to (None after a third-party run)."""
        return self._active_appagent

    async def create_subagent(self, context: Context) -> None:
        """ASSIGN: start the subtask on the selected target."""
        selection = self.selection
        if selection is None:
            raise AgentError(
                "ASSIGN without a selected target; the model must call select_application_window"
            )
        latest = self.memory.get_latest_item()
        subtask = str(latest.get_value("current_subtask") or "") if latest is not None else ""
        message = str(latest.get_value("message") or "") if latest is not None else ""
        subtask = subtask or str(context.get(ContextNames.REQUEST) or "")
        context.set(ContextNames.SUBTASK, subtask)
        context.set(ContextNames.HOST_MESSAGE, [message] if message else [])
        if selection.third_party:
            self._active_appagent = None
            status, result = await run_third_party(self, selection.name, subtask, context)
            record = {
                "agent_name": selection.name,
                "application": selection.name,
                "subtask": subtask,
                "status": status,
                "result": result,
            }
            self.blackboard.add_trajectories(record)
            context.set(
                ContextNames.PREVIOUS_SUBTASKS, [*(context.get(ContextNames.PREVIOUS_SUBTASKS) or []), record]
            )
            context.current_round_subtask_amount = context.current_round_subtask_amount + 1
            self.status = HostAgentStatus.CONTINUE.value
            return
        app = self.get_or_create_appagent(selection.root_name, selection.process_name)
        app.begin_subtask(subtask, message)
        self._active_appagent = app

    # -- PENDING and CONFIRM ------------------------------------------------------------------
    async def ask_user(self) -> None:
        """Ask the last step's questions; answers go on the Blackboard."""
        latest = self.memory.get_latest_item()
        questions = list(latest.get_value("questions") or []) if latest is not None else []
        await ask_questions(self.asker, self.blackboard, [str(q) for q in questions])

    def hold_for_confirmation(self, response: HostAgentResponse, reason: str) -> None:
        """Keep a sensitive action until the user decides."""
        self.held = HeldAction(response, reason)
