"""Level-1 of a device agent: the finite-state machine.

An :class:`AgentState` decides *what* happens next (run the processor, hand off to another
agent, end the round); an :class:`AgentStateManager` maps status strings to state instances.
Every manager subclass is a singleton and owns its own registry, so two agent types may both
register a ``"CONTINUE"`` state without clashing.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, ABCMeta, abstractmethod
from collections.abc import Awaitable
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from starweave.agent.context import ContextNames
from starweave.agent.status import status_key
from starweave.errors import AgentError, StarweaveError

if TYPE_CHECKING:
    from starweave.agent.basic import BasicAgent
    from starweave.agent.context import Context
    from starweave.agent.processor import ProcessorTemplate

logger = logging.getLogger(__name__)
StateT = TypeVar("StateT", bound="type[AgentState]")


class AgentState(ABC):
    """One state of an agent's FSM. States hold no data: keep it on the agent or the context."""

    @abstractmethod
    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Do this state's work for ``agent`` (typically ``await agent.process(context)``)."""

    @abstractmethod
    def next_agent(self, agent: BasicAgent) -> BasicAgent:
        """Return the agent that acts next (``agent`` itself unless handing off)."""

    @abstractmethod
    def next_state(self, agent: BasicAgent) -> AgentState:
        """Return the next state, usually ``manager.get_state(agent.status)``."""

    @abstractmethod
    def is_round_end(self) -> bool:
        """True when the round ends in this state."""

    @abstractmethod
    def is_subtask_end(self) -> bool:
        """True when the current subtask ends in this state."""

    @classmethod
    @abstractmethod
    def agent_class(cls) -> type[BasicAgent]:
        """The agent class this state belongs to."""

    @classmethod
    @abstractmethod
    def name(cls) -> str:
        """The status string this state handles; it is the registry key."""


class SingletonABCMeta(ABCMeta):
    """Metaclass giving every concrete class exactly one instance (per class, not per hierarchy)."""

    _instances: ClassVar[dict[type, Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        with SingletonABCMeta._lock:
            if cls not in SingletonABCMeta._instances:
                SingletonABCMeta._instances[cls] = super().__call__(*args, **kwargs)
            return SingletonABCMeta._instances[cls]


class AgentStateManager(ABC, metaclass=SingletonABCMeta):
    """Registry and cache of the states of one agent type.

    Subclass it once per agent type, register states with ``@MyManager.register`` and implement
    :attr:`none_state`. Each subclass gets its own ``_state_mapping`` even if it does not declare
    one, so registries never leak between agent types.
    """

    _state_mapping: ClassVar[dict[str, type[AgentState]]] = {}
    #: The fallback state's class (see :meth:`register_none`), which :attr:`none_state` builds.
    _none_state_cls: ClassVar[type[AgentState] | None] = None
    #: The agent class whose ``state_manager_cls`` this manager is (set by BasicAgent).
    agent_cls: ClassVar[type[BasicAgent] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass that forgets to redeclare the mapping would otherwise share its parent's.
        if "_state_mapping" not in cls.__dict__:
            cls._state_mapping = {}

    def __init__(self) -> None:
        self._state_instance_mapping: dict[str, AgentState] = {}

    def get_state(self, status: str | Enum) -> AgentState:
        """Return the (cached) state registered for ``status``, or :attr:`none_state`."""
        key = status_key(status)
        state = self._state_instance_mapping.get(key)
        if state is None:
            state_cls = self._state_mapping.get(key)
            if state_cls is None:
                # Not cached: a state registered later for this status must still be found.
                return self.none_state
            state = state_cls()
            self._state_instance_mapping[key] = state
        return state

    def add_state(self, status: str | Enum, state: AgentState) -> None:
        """Put a ready state instance in the cache under ``status``."""
        self._state_instance_mapping[status_key(status)] = state

    @property
    def state_map(self) -> dict[str, AgentState]:
        """A copy of the instantiated states, keyed by status."""
        return dict(self._state_instance_mapping)

    @classmethod
    def register(cls, state_cls: StateT) -> StateT:
        """Class decorator: register ``state_cls`` under ``state_cls.name()``; returns it unchanged."""
        cls._state_mapping[state_cls.name()] = state_cls
        return state_cls

    @classmethod
    def register_none(cls, state_cls: StateT) -> StateT:
        """Class decorator: ``state_cls`` is the fallback state (:attr:`none_state`)."""
        cls._none_state_cls = state_cls
        return state_cls

    @property
    def none_state(self) -> AgentState:
        """The fallback state for a status nobody registered: the :meth:`register_none` one."""
        if self._none_state_cls is None:
            raise AgentError(
                f"{type(self).__name__} has no fallback state; decorate one with "
                f"@{type(self).__name__}.register_none"
            )
        return self._none_state_cls()


class SelfContainedAgentState(AgentState):
    """A state of an agent that never hands off (LinuxAgent, ConstellationAgent): the next state
    is the one its ``state_manager`` registered for the agent's status, and only terminal states
    (which override the two ``is_*_end`` methods) end the round."""

    state_manager: ClassVar[type[AgentStateManager]]

    @classmethod
    def agent_class(cls) -> type[BasicAgent]:
        """The agent class that uses :attr:`state_manager` (its ``state_manager_cls``)."""
        owner = cls.state_manager.agent_cls
        if owner is None:
            raise AgentError(f"No agent class has {cls.state_manager.__name__} as its state_manager_cls")
        return owner

    #: The status this state handles, its registry key ("": the fallback state, never registered).
    status: ClassVar[str | Enum] = ""

    @classmethod
    def name(cls) -> str:
        """The registry key: :attr:`status`."""
        return status_key(cls.status)

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Terminal states do nothing."""

    def next_agent(self, agent: BasicAgent) -> BasicAgent:
        """The same agent: no handoff."""
        return agent

    def next_state(self, agent: BasicAgent) -> AgentState:
        """The state registered for the agent's current status."""
        return self.state_manager().get_state(agent.status)

    def is_round_end(self) -> bool:
        """Only terminal states end the round."""
        return False

    def is_subtask_end(self) -> bool:
        """Only terminal states end the subtask."""
        return False


class TerminalAgentState(SelfContainedAgentState):
    """A state that ends the round and the subtask (FINISH, FAIL, ERROR, the none state).

    The next state is the one registered for :attr:`finish_status` (so FAIL and ERROR move on to
    FINISH, and FINISH stays FINISH); with ``finish_status = None`` the state is absorbing itself.
    """

    finish_status: ClassVar[str | None] = "FINISH"

    def next_state(self, agent: BasicAgent) -> AgentState:
        """The FINISH state of this agent type, or this state when :attr:`finish_status` is None."""
        if self.finish_status is None:
            return self
        return self.state_manager().get_state(self.finish_status)

    def is_round_end(self) -> bool:
        """The round ends."""
        return True

    def is_subtask_end(self) -> bool:
        """The subtask ends."""
        return True


async def run_guarded(
    agent: BasicAgent, context: Context | None, error_status: str, work: Awaitable[object]
) -> None:
    """Await a state's ``work`` for ``agent``; a kernel, model or tool error (StarweaveError) sets
    ``error_status`` and puts its message in the context (see :func:`record_failure`)."""
    try:
        await work
    except StarweaveError as exc:
        logger.info("%s step failed: %s", type(agent).__name__, exc)
        record_failure(agent, context, error_status, str(exc))


async def run_step(
    agent: BasicAgent,
    context: Context | None,
    error_status: str,
    processor_cls: type[ProcessorTemplate] | None = None,
) -> None:
    """Run one step of ``agent``'s processor (or of ``processor_cls``), guarded as by
    :func:`run_guarded`; the processor applies the status the step settled."""
    await run_guarded(agent, context, error_status, agent.process(context, processor_cls))


def record_failure(agent: BasicAgent, context: Context | None, status: str, message: str) -> None:
    """Set ``agent.status`` to ``status`` and put ``message`` in the context's ERROR_MESSAGE and
    ROUND_RESULT (``"Failed: <message>"``), so the session reports why the round ended."""
    agent.status = status
    if context is not None:
        context.set(ContextNames.ERROR_MESSAGE, message)
        context.set(ContextNames.ROUND_RESULT, f"Failed: {message}")
