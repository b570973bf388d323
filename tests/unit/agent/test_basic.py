"""BasicAgent: API, processing, and a Host⇄App style handoff over a shared Blackboard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from starweave.agent import (
    AgentFactory,
    AgentRegistry,
    AgentState,
    AgentStateManager,
    BaseProcessingStrategy,
    BasicAgent,
    BasicProcessorContext,
    BasicPrompter,
    Context,
    MemoryItem,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    ProcessorTemplate,
)
from starweave.errors import AgentError, LLMResponseError

# --------------------------------------------------------------------------------- toy host


class ToyAgentBase(BasicAgent):
    def get_prompter(self, *args: Any, **kwargs: Any) -> BasicPrompter:
        return BasicPrompter(False, None, None)

    def message_constructor(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []


class HostStrategy(BaseProcessingStrategy):
    """Reads the app's answer from the blackboard; without one it asks for delegation."""

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        answers = [t.get_value("answer") for t in agent.blackboard.trajectories if t.get_value("answer")]
        if answers:
            agent.status = "FINISH"
            return ProcessingResult(success=True, data={"answer": answers[-1]})
        agent.status = "ASSIGN"
        return ProcessingResult(success=True, data={"delegated": True})


class AppStrategy(BaseProcessingStrategy):
    """Does the work and writes it to the (shared) blackboard."""

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        agent.blackboard.add_trajectories({"step": agent.step, "answer": 42, "by": agent.name})
        agent.status = "FINISH"
        return ProcessingResult(success=True, data={"action_success": True})


@dataclass
class HandoffContext(BasicProcessorContext):
    """What the toy host's step provides."""

    answer: int | None = None
    delegated: bool | None = None


class HostProcessor(ProcessorTemplate):
    processor_context_class = HandoffContext

    def _setup_strategies(self) -> None:
        self.strategies[ProcessingPhase.LLM_INTERACTION] = HostStrategy()


class AppProcessor(ProcessorTemplate):
    def _setup_strategies(self) -> None:
        self.strategies[ProcessingPhase.ACTION_EXECUTION] = AppStrategy()


class ToyState(AgentState):
    status = ""
    owner: type[BasicAgent] = BasicAgent
    round_end = False

    async def handle(self, agent: Any, context: Any = None) -> None:
        await agent.process(context)
        agent.step += 1

    def next_agent(self, agent: Any) -> Any:
        return agent

    def next_state(self, agent: Any) -> AgentState:
        return agent.state_manager.get_state(agent.status)

    def is_round_end(self) -> bool:
        return self.round_end

    def is_subtask_end(self) -> bool:
        return self.round_end

    @classmethod
    def agent_class(cls) -> type[BasicAgent]:
        return cls.owner

    @classmethod
    def name(cls) -> str:
        return cls.status


class HostManager(AgentStateManager):
    @property
    def none_state(self) -> AgentState:
        return HostFinish()


class AppManager(AgentStateManager):
    @property
    def none_state(self) -> AgentState:
        return AppFinish()


class ToyHost(ToyAgentBase):
    state_manager_cls = HostManager


class ToyApp(ToyAgentBase):
    state_manager_cls = AppManager


@HostManager.register
class HostContinue(ToyState):
    status = "CONTINUE"
    owner = ToyHost

    def next_state(self, agent: Any) -> AgentState:
        if agent.status == "ASSIGN":
            return AppManager().get_state("CONTINUE")
        return super().next_state(agent)

    def next_agent(self, agent: Any) -> Any:
        if agent.status != "ASSIGN":
            return agent
        app = AgentFactory.create_agent("toy_app", "app-1")
        app.host = agent
        app.blackboard = agent.blackboard
        return app


@HostManager.register
class HostFinish(ToyState):
    status = "FINISH"
    owner = ToyHost
    round_end = True

    async def handle(self, agent: Any, context: Any = None) -> None:
        return None


@AppManager.register
class AppContinue(ToyState):
    status = "CONTINUE"
    owner = ToyApp


@AppManager.register
class AppFinish(ToyState):
    status = "FINISH"
    owner = ToyApp

    async def handle(self, agent: Any, context: Any = None) -> None:
        return None

    def next_state(self, agent: Any) -> AgentState:
        return HostManager().get_state("CONTINUE") if agent.host else self

    def next_agent(self, agent: Any) -> Any:
        host = agent.host
        if host is None:
            return agent
        host.blackboard = agent.blackboard
        host.status = "CONTINUE"
        return host


@pytest.fixture(autouse=True)
def registered_agents() -> Any:
    AgentRegistry.register("toy_host", processor_cls=HostProcessor)(ToyHost)
    AgentRegistry.register("toy_app", processor_cls=AppProcessor)(ToyApp)
    yield
    AgentRegistry.unregister("toy_host")
    AgentRegistry.unregister("toy_app")


async def test_handoff_loop_shares_one_blackboard() -> None:
    host = AgentFactory.create_agent("toy_host", "host")
    context = Context()
    agent: BasicAgent = host
    trace: list[tuple[str, str]] = []
    for _ in range(10):  # safety cap: the toy FSM ends in 4 steps
        if agent.state.is_round_end():
            break
        trace.append((agent.name, agent.state.name()))
        await agent.handle(context)
        next_state = agent.state.next_state(agent)
        agent = agent.state.next_agent(agent)
        agent.set_state(next_state)
    assert trace == [("host", "CONTINUE"), ("app-1", "CONTINUE"), ("app-1", "FINISH"), ("host", "CONTINUE")]
    assert agent is host and isinstance(host.state, HostFinish)
    assert host.processor is not None
    assert host.processor.processing_context.local(HandoffContext).answer == 42
    assert host.blackboard.trajectories.to_list_of_dicts() == [{"step": 0, "answer": 42, "by": "app-1"}]
    assert host.step == 2


def test_defaults_and_properties() -> None:
    agent = ToyHost("h")
    assert agent.name == "h" and agent.step == 0 and agent.status == "CONTINUE"
    assert isinstance(agent.state, HostContinue) and isinstance(agent.default_state, HostContinue)
    assert agent.host is None and agent.processor is None and agent.llm is None
    assert agent.status_manager.CONTINUE.value == "CONTINUE"  # type: ignore[attr-defined]


def test_status_accepts_enum() -> None:
    from starweave.agent import AgentStatus

    agent = ToyHost("h")
    agent.status = AgentStatus.FAIL
    assert agent.status == "FAIL"


def test_set_state_rejects_foreign_state() -> None:
    agent = ToyHost("h")
    with pytest.raises(AgentError, match="belongs to ToyApp"):
        agent.set_state(AppContinue())
    with pytest.raises(AgentError, match="needs an AgentState"):
        agent.set_state("CONTINUE")  # type: ignore[arg-type]


def test_memory_api() -> None:
    agent = ToyHost("h")
    agent.add_memory(MemoryItem(step=1, action="click"))
    agent.add_memory(MemoryItem(step=2, action="type"))
    agent.delete_memory(1)
    assert agent.memory.to_list_of_dicts() == [{"step": 2, "action": "type"}]
    agent.set_memory_from_list_of_dicts([{"step": 5, "Thought": "hm"}])
    assert agent.memory.get_latest_item() is not None
    assert agent.memory.to_list_of_dicts() == [{"step": 5, "Thought": "hm"}]
    agent.clear_memory()
    assert agent.memory.is_empty()
    with pytest.raises(AgentError):
        agent.set_memory_from_list_of_dicts({"step": 1})  # type: ignore[arg-type]


async def test_process_without_processor_cls_is_a_clear_error() -> None:
    class Bare(ToyAgentBase):
        state_manager_cls = HostManager

    with pytest.raises(AgentError, match="processor_cls"):
        await Bare("b").process(Context())


def test_agent_without_state_manager_explains() -> None:
    class NoManager(ToyAgentBase):
        pass

    with pytest.raises(AgentError, match="state_manager_cls"):
        _ = NoManager("n").state


async def test_defaults_of_hooks() -> None:
    agent = ToyHost("h")
    assert agent.process_confirmation() is True
    assert await agent.context_provision() is None
    assert BasicAgent.get_cls("toy_app") is ToyApp


@pytest.mark.parametrize(
    "text",
    [
        '{"Status": "FINISH", "n": 1}',
        '```json\n{"Status": "FINISH", "n": 1}\n```',
        'Sure! Here it is: {"Status": "FINISH", "n": 1} Hope that helps {not json}',
    ],
)
def test_response_to_dict_extracts_json(text: str) -> None:
    assert BasicAgent.response_to_dict(text) == {"Status": "FINISH", "n": 1}


def test_response_to_dict_handles_braces_in_strings() -> None:
    assert BasicAgent.response_to_dict('x {"a": "}{", "b": {"c": 1}} y') == {"a": "}{", "b": {"c": 1}}


def test_response_to_dict_without_json_raises() -> None:
    with pytest.raises(LLMResponseError, match="no JSON object"):
        BasicAgent.response_to_dict("I cannot do that")


def test_get_command_string() -> None:
    assert BasicAgent.get_command_string("click_input", {"id": "3", "double": False}) == (
        "click_input(id='3', double=False)"
    )
    assert BasicAgent.get_command_string("wait", {}) == "wait()"


async def test_process_without_context_uses_a_fresh_one() -> None:
    host = ToyHost("h")
    await host.process(None)
    assert host.processor is not None
    assert isinstance(host.processor.global_context, Context)
    assert host.status == "ASSIGN"
