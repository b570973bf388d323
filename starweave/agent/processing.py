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
from typing import TYPE_CHECKING, Any

from starweave.errors import ProcessingException

if TYPE_CHECKING:
    from starweave.agent.context import Context, ContextNames

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
    """

    success: bool
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    phase: ProcessingPhase | None = None
    execution_time: float = 0.0
    status: str | None = None


@dataclass
class BasicProcessorContext:
    """The local data store of one processor run.

    Subclasses add their own fields; mark those meant for the step log with
    ``field(default=..., metadata=LOGGED)``. Keys a strategy returns
    that are not declared fields go to :attr:`extras` and are still readable as attributes
    (``ctx.some_key``).
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
    extras: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: serve undeclared keys from extras.
        if name.startswith("__") or name == "extras":
            raise AttributeError(name)
        extras = self.__dict__.get("extras", {})
        if name in extras:
            return extras[name]
        raise AttributeError(f"{type(self).__name__} has no field or extra key {name!r}")

    @classmethod
    def field_names(cls) -> frozenset[str]:
        """Names of the declared fields (without ``extras``)."""
        return frozenset(f.name for f in dataclasses.fields(cls) if f.name != "extras")

    def update_from_dict(self, data: dict[str, Any]) -> None:
        """Set declared fields from ``data``; keep other keys in :attr:`extras`."""
        names = self.field_names()
        for key, value in data.items():
            if key in names:
                setattr(self, key, value)
            else:
                self.extras[key] = value

    def to_dict(self, selective: bool = True) -> dict[str, Any]:
        """Return the logged fields (``selective=True``) or every field plus the extras."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extras":
                continue
            if selective and not f.metadata.get(SELECTIVE, False):
                continue
            out[f.name] = getattr(self, f.name)
        if not selective:
            out.update(self.extras)
        return out


@dataclass
class ProcessingContext:
    """What a strategy sees: the run's local context and the session's global context."""

    global_context: Context
    local_context: BasicProcessorContext
    phase_results: dict[ProcessingPhase, ProcessingResult] = field(default_factory=dict)

    def get_local(self, key: str, default: Any = None) -> Any:
        """Return the local value of ``key`` (a field or an extra), or ``default`` if unset/None."""
        value = getattr(self.local_context, key, None)
        return default if value is None else value

    def get_global(self, key: str | ContextNames, default: Any = None) -> Any:
        """Return the global value of ``key``, or ``default`` if unset/None.

        ``key`` may be a ContextNames member, its name in any case (``"session_step"``) or an
        attribute of the context such as ``command_dispatcher``.
        """
        value = self.global_context.resolve(key)
        return default if value is None else value

    def get(self, key: str, default: Any = None) -> Any:
        """Return the local value of ``key`` if set, else the global one, else ``default``."""
        value = self.get_local(key)
        if value is None:
            value = self.get_global(key)
        return default if value is None else value

    def update_local(self, data: dict[str, Any]) -> None:
        """Merge a strategy's output into the local context."""
        self.local_context.update_from_dict(data)

    def require_local(self, field_name: str, expected_type: type | None = None) -> Any:
        """Return a local value that must be present (and of ``expected_type`` if given)."""
        value = self.get_local(field_name)
        if value is None:
            raise ProcessingException(f"Required field '{field_name}' not found in local context")
        if expected_type is not None and not isinstance(value, expected_type):
            raise ProcessingException(
                f"Field '{field_name}' has type {type(value).__name__}, expected {expected_type.__name__}"
            )
        return value
