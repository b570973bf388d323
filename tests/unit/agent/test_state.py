"""AgentStatus, AgentState and per-agent-type AgentStateManager registries."""

from __future__ import annotations

from typing import Any

import pytest

from starweave.agent import AgentState, AgentStateManager, AgentStatus


class _StubState(AgentState):
    """A state whose behaviour the tests do not care about."""

    status = "NONE"

    async def handle(self, agent: Any, context: Any = None) -> None:
        return None

    def next_agent(self, agent: Any) -> Any:
        return agent

    def next_state(self, agent: Any) -> AgentState:
        return self

    def is_round_end(self) -> bool:
        return self.status in ("FINISH", "FAIL", "ERROR")

    def is_subtask_end(self) -> bool:
        return self.is_round_end()

    @classmethod
    def agent_class(cls) -> type:
        return object

    @classmethod
    def name(cls) -> str:
        return cls.status


def test_agent_status_values_equal_names() -> None:
    assert [s.name for s in AgentStatus] == [
        "ERROR", "FINISH", "CONTINUE", "FAIL", "PENDING", "CONFIRM", "SCREENSHOT"
    ]  # fmt: skip
    assert all(s.value == s.name for s in AgentStatus)


def test_agent_state_is_abstract() -> None:
    with pytest.raises(TypeError):
        AgentState()  # type: ignore[abstract]


class NoneAlpha(_StubState):
    status = "NONE_ALPHA"


class AlphaManager(AgentStateManager):
    _state_mapping: dict[str, type[AgentState]] = {}  # noqa: RUF012 - redeclared as the reference does

    @property
    def none_state(self) -> AgentState:
        return NoneAlpha()


class BetaManager(AgentStateManager):
    # forgets to redeclare _state_mapping: it must still get its own registry

    @property
    def none_state(self) -> AgentState:
        return NoneAlpha()


class GammaManager(BetaManager):
    pass


@AlphaManager.register
class AlphaContinue(_StubState):
    status = "CONTINUE"


@BetaManager.register
class BetaContinue(_StubState):
    status = "CONTINUE"


@BetaManager.register
class BetaFinish(_StubState):
    status = "FINISH"


def test_registries_are_per_manager_type() -> None:
    assert isinstance(AlphaManager().get_state("CONTINUE"), AlphaContinue)
    assert isinstance(BetaManager().get_state("CONTINUE"), BetaContinue)
    # Each manager finds exactly the states registered on it; every other status falls back.
    registered: dict[type[AgentStateManager], dict[str, type[AgentState]]] = {
        AlphaManager: {"CONTINUE": AlphaContinue},
        BetaManager: {"CONTINUE": BetaContinue, "FINISH": BetaFinish},
        GammaManager: {},
    }
    for manager, states in registered.items():
        for status in ("CONTINUE", "FINISH"):
            assert type(manager().get_state(status)) is states.get(status, NoneAlpha), (manager, status)
    # Registering on a subclass leaves the base's own table empty.
    assert AgentStateManager._state_mapping == {}


def test_register_returns_the_class_unchanged() -> None:
    assert AlphaManager.register(AlphaContinue) is AlphaContinue


def test_manager_is_a_singleton_per_subclass() -> None:
    assert AlphaManager() is AlphaManager()
    assert BetaManager() is not GammaManager()
    assert GammaManager() is GammaManager()


def test_get_state_caches_and_accepts_enum() -> None:
    manager = BetaManager()
    first = manager.get_state(AgentStatus.FINISH)
    assert first is manager.get_state("FINISH")
    assert "FINISH" in manager.state_map


def test_unknown_status_falls_back_to_none_state() -> None:
    state = AlphaManager().get_state("SOMETHING_ELSE")
    assert isinstance(state, NoneAlpha)


def test_late_registration_is_found() -> None:
    manager = GammaManager()
    assert isinstance(manager.get_state("PENDING"), NoneAlpha)

    @GammaManager.register
    class GammaPending(_StubState):
        status = "PENDING"

    assert isinstance(manager.get_state("PENDING"), GammaPending)


def test_add_state_puts_an_instance_in_the_cache() -> None:
    manager = AlphaManager()
    custom = BetaFinish()
    manager.add_state("CUSTOM", custom)
    assert manager.get_state("CUSTOM") is custom
    assert manager.state_map["CUSTOM"] is custom
