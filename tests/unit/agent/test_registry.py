"""AgentRegistry and AgentFactory."""

from __future__ import annotations

from typing import Any

import pytest

from starweave.agent import AgentFactory, AgentRegistry, BasicAgent, BasicPrompter, ProcessorTemplate
from starweave.errors import RegistryError


class Plain(BasicAgent):
    def __init__(self, name: str, flavour: str = "plain") -> None:
        super().__init__(name)
        self.flavour = flavour

    def get_prompter(self, *args: Any, **kwargs: Any) -> BasicPrompter:
        return BasicPrompter(False, None, None)

    def message_constructor(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []


class PlainProcessor(ProcessorTemplate):
    def _setup_strategies(self) -> None:
        return None


@pytest.fixture
def names() -> Any:
    created: list[str] = []
    yield created
    for name in created:
        AgentRegistry.unregister(name)


def test_register_get_list_and_third_party(names: list[str]) -> None:
    names += ["reg_plain", "reg_third"]

    @AgentRegistry.register(agent_name="reg_plain", processor_cls=PlainProcessor)
    class A(Plain):
        pass

    @AgentRegistry.register(agent_name="reg_third", third_party=True)
    class B(Plain):
        pass

    assert AgentRegistry.get("reg_plain") is A and A.processor_cls is PlainProcessor
    assert B.processor_cls is None
    assert {"reg_plain", "reg_third"} <= set(AgentRegistry.list_agents())
    assert AgentRegistry.is_third_party("reg_third") and not AgentRegistry.is_third_party("reg_plain")
    assert "reg_third" in [n for n in AgentRegistry.list_agents() if AgentRegistry.is_third_party(n)]


def test_unknown_name_lists_registered_names(names: list[str]) -> None:
    names.append("reg_known")
    AgentRegistry.register("reg_known")(Plain)
    with pytest.raises(RegistryError) as info:
        AgentRegistry.get("reg_missing")
    assert "reg_missing" in str(info.value) and "reg_known" in str(info.value)


def test_factory_passes_arguments(names: list[str]) -> None:
    names.append("reg_factory")
    AgentRegistry.register("reg_factory")(Plain)
    agent = AgentFactory.create_agent("reg_factory", "n1", flavour="spicy")
    assert isinstance(agent, Plain) and agent.name == "n1" and agent.flavour == "spicy"
    with pytest.raises(RegistryError):
        AgentFactory.create_agent("reg_nothing")
