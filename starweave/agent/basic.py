"""BasicAgent: the base of every device agent (state, memory, blackboard, processor)."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent.blackboard import Blackboard
from starweave.agent.context import Context
from starweave.agent.memory import Memory, MemoryItem
from starweave.agent.state import AgentState, AgentStateManager
from starweave.agent.status import AgentStatus, status_key
from starweave.errors import AgentError, JSONExtractionError, LLMResponseError

if TYPE_CHECKING:
    from starweave.agent.processing import ProcessingResult
    from starweave.agent.processor import ProcessorTemplate
    from starweave.agent.prompter import BasicPrompter


class BasicAgent(ABC):
    """An agent: an FSM state, a step counter, memory, a (shareable) blackboard and a processor.

    Subclasses set :attr:`state_manager_cls` (their AgentStateManager) and get
    :attr:`processor_cls` from ``@AgentRegistry.register(..., processor_cls=...)`` or set it
    directly. Whoever creates the agent passes the model client as ``llm``.
    """

    #: The processor built for each step by :meth:`process`.
    processor_cls: ClassVar[type[ProcessorTemplate] | None] = None
    #: The state manager of this agent type.
    state_manager_cls: ClassVar[type[AgentStateManager] | None] = None
    #: The status enum of this agent type.
    status_enum: ClassVar[type[Enum]] = AgentStatus

    def __init__(self, name: str, blackboard: Blackboard | None = None, *, llm: Any = None) -> None:
        self._name = name
        self._step = 0
        self._memory = Memory()
        self._blackboard = blackboard if blackboard is not None else Blackboard()
        self._host: BasicAgent | None = None
        self._processor: ProcessorTemplate | None = None
        self._status: str = AgentStatus.CONTINUE.value
        self._state: AgentState | None = None
        self.llm: Any = llm
        self.logger = logging.getLogger(f"{type(self).__name__}.{name}")

    # -- properties -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The agent's name."""
        return self._name

    @property
    def status(self) -> str:
        """The current status string (e.g. ``"CONTINUE"``)."""
        return self._status

    @status.setter
    def status(self, value: str | Enum) -> None:
        self._status = status_key(value)

    @property
    def step(self) -> int:
        """How many steps the agent has taken."""
        return self._step

    @step.setter
    def step(self, value: int) -> None:
        self._step = value

    @property
    def memory(self) -> Memory:
        """The agent's own memory."""
        return self._memory

    @memory.setter
    def memory(self, value: Memory) -> None:
        self._memory = value

    @property
    def blackboard(self) -> Blackboard:
        """The blackboard; cooperating agents share one instance."""
        return self._blackboard

    @blackboard.setter
    def blackboard(self, value: Blackboard) -> None:
        self._blackboard = value

    @property
    def host(self) -> BasicAgent | None:
        """The agent that delegated to this one, if any."""
        return self._host

    @host.setter
    def host(self, value: BasicAgent | None) -> None:
        self._host = value

    @property
    def processor(self) -> ProcessorTemplate | None:
        """The processor of the current (or last) step."""
        return self._processor

    @processor.setter
    def processor(self, value: ProcessorTemplate | None) -> None:
        self._processor = value

    @property
    def status_manager(self) -> type[Enum]:
        """The status enum of this agent type (AgentStatus unless overridden)."""
        return self.status_enum

    @property
    def state_manager(self) -> AgentStateManager:
        """The (singleton) state manager of this agent type."""
        if self.state_manager_cls is None:
            raise AgentError(
                f"{type(self).__name__} has no state_manager_cls; set it to its AgentStateManager"
            )
        manager: AgentStateManager = self.state_manager_cls()
        return manager

    @property
    def default_state(self) -> AgentState:
        """The state a new agent starts in: the CONTINUE state of its manager."""
        return self.state_manager.get_state(AgentStatus.CONTINUE.value)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        manager = cls.__dict__.get("state_manager_cls")
        if manager is not None and manager.agent_cls is None:
            # The first class declaring a manager owns its states (they accept its subclasses too).
            manager.agent_cls = cls

    @property
    def state(self) -> AgentState:
        """The current FSM state (the default state until one is set)."""
        if self._state is None:
            self._state = self.default_state
        return self._state

    def set_state(self, state: AgentState) -> None:
        """Switch to ``state``; it must be an AgentState meant for this agent class."""
        if not isinstance(state, AgentState):
            raise AgentError(f"set_state() needs an AgentState, got {type(state).__name__}")
        if not isinstance(self, state.agent_class()):
            raise AgentError(
                f"State {type(state).__name__} belongs to {state.agent_class().__name__}, "
                f"not to {type(self).__name__}"
            )
        self._state = state

    # -- memory ---------------------------------------------------------------------------
    def add_memory(self, memory_item: MemoryItem) -> None:
        """Append a step record to the agent's memory."""
        self._memory.add_memory_item(memory_item)

    def delete_memory(self, step: int) -> None:
        """Remove the records of ``step``."""
        self._memory.delete(step)

    def clear_memory(self) -> None:
        """Forget every record."""
        self._memory.clear()

    def set_memory_from_list_of_dicts(self, data: list[dict[str, Any]]) -> None:
        """Replace the memory with records built from ``data``."""
        if not isinstance(data, list):
            raise AgentError(
                f"set_memory_from_list_of_dicts() needs a list of dicts, got {type(data).__name__}"
            )
        self._memory = Memory.from_list_of_dicts(data)

    # -- running --------------------------------------------------------------------------
    async def handle(self, context: Context | None) -> None:
        """Let the current state do its work."""
        await self.state.handle(self, context)

    async def process(
        self, context: Context | None, processor_cls: type[ProcessorTemplate] | None = None
    ) -> ProcessingResult:
        """Build this step's processor (``processor_cls(agent, context)``, by default the agent's),
        run it and return the step's record (its ``status`` and typed ``local`` fields).

        Without a context (a state called with none) the step runs on a fresh, empty Context.
        """
        if context is None:
            context = Context()
        processor_cls = processor_cls or self.processor_cls
        if processor_cls is None:
            raise AgentError(
                f"{type(self).__name__} has no processor_cls; register it with "
                f"@AgentRegistry.register(agent_name=..., processor_cls=...) or set the attribute"
            )
        self.processor = processor_cls(self, context)
        return await self.processor.process()

    async def context_provision(self, *args: Any, **kwargs: Any) -> None:
        """Prepare what the agent needs before its first step (tools, retrievers); default: nothing."""
        return None

    def process_confirmation(self) -> bool:
        """Ask whether a sensitive action may run; the default approves."""
        return True

    @abstractmethod
    def get_prompter(self, *args: Any, **kwargs: Any) -> BasicPrompter:
        """Build the agent's prompter."""

    @abstractmethod
    def message_constructor(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """Build the chat messages of one step."""

    # -- helpers --------------------------------------------------------------------------
    @classmethod
    def get_cls(cls, name: str) -> type[BasicAgent]:
        """The agent class registered under ``name``."""
        from starweave.agent.registry import AgentRegistry

        return AgentRegistry.get(name)

    @staticmethod
    def response_to_dict(response: str) -> dict[str, Any]:
        """Parse the JSON object in a model answer (plain, fenced or inside prose).

        Raises LLMResponseError when there is none.
        """
        # Imported here: the LLM package pulls in provider SDKs the kernel does not need at import.
        from starweave.llm.jsonschema import extract_json

        try:
            return extract_json(response)
        except JSONExtractionError as exc:
            raise LLMResponseError(f"Could not read the model's answer as JSON: {exc}") from exc

    @staticmethod
    def get_command_string(command_name: str, params: dict[str, Any]) -> str:
        """Render a call as ``name(k=repr(v), ...)``."""
        args = ", ".join(f"{key}={value!r}" for key, value in params.items())
        return f"{command_name}({args})"
