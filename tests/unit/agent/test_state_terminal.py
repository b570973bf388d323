"""TerminalAgentState and record_failure, shared by the agents' FSMs."""

from __future__ import annotations

from typing import Any, ClassVar

from starweave.agent import (
    AgentState,
    AgentStateManager,
    BasicAgent,
    BasicPrompter,
    Context,
    ContextNames,
    SelfContainedAgentState,
    TerminalAgentState,
    record_failure,
)


class _Agent(BasicAgent):
    def get_prompter(self, *args: Any, **kwargs: Any) -> BasicPrompter:
        return BasicPrompter(False, None, None)

    def message_constructor(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []


class _Manager(AgentStateManager):
    @property
    def none_state(self) -> AgentState:
        return _None()


class _Base(SelfContainedAgentState):
    state_manager: ClassVar[type[AgentStateManager]] = _Manager

    @classmethod
    def agent_class(cls) -> type[Any]:
        return _Agent


@_Manager.register
class _Finish(_Base, TerminalAgentState):
    @classmethod
    def name(cls) -> str:
        return "FINISH"


@_Manager.register
class _Fail(_Finish):
    @classmethod
    def name(cls) -> str:
        return "FAIL"


class _None(_Finish):
    @classmethod
    def name(cls) -> str:
        return ""


class _Absorbing(_Base, TerminalAgentState):
    finish_status = None

    @classmethod
    def name(cls) -> str:
        return "DONE"


def test_terminal_states_end_and_move_on_to_finish() -> None:
    agent = _Agent("a")
    for state in (_Finish(), _Fail(), _None()):
        assert state.is_round_end() and state.is_subtask_end()
        assert type(state.next_state(agent)) is _Finish
        assert state.next_agent(agent) is agent


def test_without_finish_status_the_state_is_absorbing() -> None:
    state = _Absorbing()
    assert state.next_state(_Agent("a")) is state


def test_record_failure_sets_status_and_context() -> None:
    agent = _Agent("a")
    context = Context()
    record_failure(agent, context, "FAIL", "the tool broke")
    assert agent.status == "FAIL"
    assert context.get(ContextNames.ERROR_MESSAGE) == "the tool broke"
    assert context.get(ContextNames.ROUND_RESULT) == "Failed: the tool broke"
    record_failure(agent, None, "ERROR", "no context")
    assert agent.status == "ERROR"
