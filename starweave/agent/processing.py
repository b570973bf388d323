"""Data models of the processor layer: phases, results and the two-level processing context.

The *local* context (:class:`BasicProcessorContext`) holds what one processor run produces;
the *global* context (:class:`~starweave.agent.context.Context`) is shared by the session,
its rounds and every agent. :class:`ProcessingContext` joins the two for strategies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from starweave.errors import ProcessingException

if TYPE_CHECKING:
    from starweave.agent.context import Context, ContextNames

T = TypeVar("T")

#: Field metadata key marking a BasicProcessorContext field for logs and memory.
SELECTIVE = "selective"
#: Metadata for ``field(..., metadata=LOGGED)``: the field is written to the step log.
LOGGED: Mapping[str, Any] = MappingProxyType({SELECTIVE: True})


class ProcessingPhase(Enum):
    """The phases of one processor run, in their fixed execution order."""

    SETUP = "setup"
    DATA_COLLECTION = "data_collection"
    LLM_INTERACTION = "llm_interaction"
    ACTION_EXECUTION = "action_execution"
    MEMORY_UPDATE = "memory_update"
    CLEANUP = "cleanup"


#: The order :meth:`ProcessorTemplate.process` runs the phases in.
PHASE_ORDER: tuple[ProcessingPhase, ...] = tuple(ProcessingPhase)


@dataclass
class ProcessingResult:
    """The outcome of one strategy (or of a whole processor run).

    ``status`` is the agent status the step decided (``"CONTINUE"``, ``"FINISH"``, ...), set by
    the strategy that settles it (the action phase); the processor hands it to the agent, so
    strategies never write ``agent.status`` themselves. ``None``: this result decides nothing.
    ``local`` is set on the result of a whole run: the step's typed local context, so callers read
    the step from its record instead of from the processor.
    """

    success: bool
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    phase: ProcessingPhase | None = None
    execution_time: float = 0.0
    status: str | None = None
    local: BasicProcessorContext | None = None


@dataclass
class BasicProcessorContext:
    """The local data store of one processor run.

    Every value a strategy provides is a declared field: subclasses add their agent's fields
    (``None`` until a strategy provides them, so a missing dependency stays detectable) and mark
    those meant for the step log with ``field(default=..., metadata=LOGGED)``. The processor
    refuses a chain whose ``@provides``/``@depends_on`` name an undeclared field, and
    :meth:`update_from_dict` refuses undeclared keys.
    """

    agent_type: str = field(default="", metadata=LOGGED)
    session_step: int = field(default=0, metadata=LOGGED)
    round_step: int = field(default=0, metadata=LOGGED)
    round_num: int = field(default=0, metadata=LOGGED)
    agent_step: int = field(default=0, metadata=LOGGED)
    request: str = field(default="", metadata=LOGGED)
    subtask: str = field(default="", metadata=LOGGED)
    app_root: str = field(default="", metadata=LOGGED)
    cost: float = field(default=0.0, metadata=LOGGED)
    results: Any = field(default="", metadata=LOGGED)
    total_time: float = field(default=0.0, metadata=LOGGED)
    execution_times: dict[str, float] = field(default_factory=dict, metadata=LOGGED)
    # What every agent's LLM_INTERACTION phase provides (see ``steps.llm_result``).
    parsed_response: Any = None
    response_text: str | None = None
    llm_cost: float | None = None
    prompt_message: list[dict[str, Any]] | None = None
    tokens: int | None = None
    llm_time: float | None = None
    # The status the step settled, whether its action succeeded and the step's memory record.
    status: str | None = None
    action_success: bool | None = None
    memory_item: Any = None
    # A confirmation step's changes to the memory record of the step that asked for it.
    amended_memory: dict[str, Any] | None = None

    @classmethod
    def field_names(cls) -> frozenset[str]:
        """Names of the declared fields."""
        return frozenset(f.name for f in dataclasses.fields(cls))

    def update_from_dict(self, data: dict[str, Any]) -> None:
        """Set declared fields from ``data``; an undeclared key is a ProcessingException."""
        names = self.field_names()
        undeclared = sorted(set(data) - names)
        if undeclared:
            raise ProcessingException(
                f"{type(self).__name__} declares no field {', '.join(map(repr, undeclared))}; "
                f"declare it on the processor's processor_context_class"
            )
        for key, value in data.items():
            setattr(self, key, value)

    def to_dict(self, selective: bool = True) -> dict[str, Any]:
        """Return the logged fields (``selective=True``) or every field."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if not selective or f.metadata.get(SELECTIVE, False)
        }


L = TypeVar("L", bound=BasicProcessorContext)


def present(value: T | None, name: str) -> T:
    """``value``, which a declared dependency guarantees; None is a ProcessingException naming ``name``."""
    if value is None:
        raise ProcessingException(f"Required field '{name}' not found in local context")
    return value


@dataclass
class ProcessingContext:
    """What a strategy sees: the run's local context and the session's global context."""

    global_context: Context
    local_context: BasicProcessorContext
    phase_results: dict[ProcessingPhase, ProcessingResult] = field(default_factory=dict)

    def local(self, cls: type[L]) -> L:
        """The local context as the processor's ``processor_context_class`` ``cls`` (typed access)."""
        local = self.local_context
        if not isinstance(local, cls):
            raise ProcessingException(
                f"The local context is a {type(local).__name__}, not the {cls.__name__} this strategy reads"
            )
        return local

    def get_global(self, key: str | ContextNames, default: Any = None) -> Any:
        """Return the global value of ``key``, or ``default`` if unset/None.

        ``key`` may be a ContextNames member, its name in any case (``"session_step"``) or an
        attribute of the context such as ``command_dispatcher``.
        """
        value = self.global_context.resolve(key)
        return default if value is None else value

    def get(self, key: str, default: Any = None) -> Any:
        """Return the local value of ``key`` if set, else the global one, else ``default``."""
        value = getattr(self.local_context, key, None)
        if value is None:
            value = self.get_global(key)
        return default if value is None else value

    def update_local(self, data: dict[str, Any]) -> None:
        """Merge a strategy's output into the local context."""
        self.local_context.update_from_dict(data)
