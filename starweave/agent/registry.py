"""Registry of agent classes by name, and the factory that creates agents from it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from starweave.errors import RegistryError

if TYPE_CHECKING:
    from starweave.agent.basic import BasicAgent
    from starweave.agent.processor import ProcessorTemplate

logger = logging.getLogger(__name__)
AgentT = TypeVar("AgentT", bound="type[BasicAgent]")


class AgentRegistry:
    """Maps agent names (``"host"``, ``"app"``, ``"LinuxAgent"``...) to agent classes."""

    _registry: ClassVar[dict[str, type[BasicAgent]]] = {}
    _third_party: ClassVar[set[str]] = set()

    @classmethod
    def register(
        cls,
        agent_name: str,
        processor_cls: type[ProcessorTemplate] | None = None,
        third_party: bool = False,
    ) -> Callable[[AgentT], AgentT]:
        """Class decorator: register the agent under ``agent_name`` (and set its processor class)."""

        def decorate(agent_cls: AgentT) -> AgentT:
            previous = cls._registry.get(agent_name)
            if previous is not None and previous is not agent_cls:
                logger.warning("Agent name %r re-registered: %s replaces %s", agent_name, agent_cls, previous)
            if processor_cls is not None:
                agent_cls.processor_cls = processor_cls
            cls._registry[agent_name] = agent_cls
            if third_party:
                cls._third_party.add(agent_name)
            else:
                cls._third_party.discard(agent_name)
            return agent_cls

        return decorate

    @classmethod
    def get(cls, agent_name: str) -> type[BasicAgent]:
        """The class registered as ``agent_name``; RegistryError lists the known names."""
        try:
            return cls._registry[agent_name]
        except KeyError:
            known = ", ".join(sorted(cls._registry)) or "(none)"
            raise RegistryError(
                f"Unknown agent {agent_name!r}; registered agents: {known}. "
                f"Register it with @AgentRegistry.register(agent_name={agent_name!r}) "
                f"and make sure its module is imported"
            ) from None

    @classmethod
    def list_agents(cls) -> list[str]:
        """The registered names, sorted."""
        return sorted(cls._registry)

    @classmethod
    def is_third_party(cls, agent_name: str) -> bool:
        """True when ``agent_name`` was registered with ``third_party=True``."""
        return agent_name in cls._third_party

    @classmethod
    def unregister(cls, agent_name: str) -> None:
        """Forget ``agent_name`` (mainly for tests and plug-in unloading)."""
        cls._registry.pop(agent_name, None)
        cls._third_party.discard(agent_name)


class AgentFactory:
    """Creates agents by registered name."""

    @staticmethod
    def create_agent(agent_type: str, *args: Any, **kwargs: Any) -> BasicAgent:
        """Instantiate the agent registered as ``agent_type`` with the given arguments."""
        return AgentRegistry.get(agent_type)(*args, **kwargs)
