"""HostAgentProcessor: DATA_COLLECTION → LLM_INTERACTION → ACTION_EXECUTION → MEMORY_UPDATE (seed 002)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from starweave.agent import ProcessingPhase, ProcessorTemplate
from starweave.agent.processor import PhaseStrategies
from starweave.agents.app.middleware import AgentStepLoggingMiddleware
from starweave.agents.common import action_failure, device_phases
from starweave.agents.host.local import HostProcessorContext
from starweave.agents.host.response import HostAgentStatus
from starweave.agents.host.strategies import (
    DesktopDataCollectionStrategy,
    HostActionExecutionStrategy,
    HostLLMInteractionStrategy,
    HostMemoryUpdateStrategy,
)


class HostAgentProcessor(ProcessorTemplate):
    """The HostAgent's step: data collection and the model are fail-fast, action and memory are not."""

    processor_context_class = HostProcessorContext
    #: A crash while running the actions is the step's ERROR.
    failure_status: ClassVar[Mapping[ProcessingPhase, str]] = action_failure(HostAgentStatus.ERROR.value)
    external_fields: ClassVar[frozenset[str]] = frozenset({"command_dispatcher", "log_path", "session_step"})

    phase_strategies: ClassVar[PhaseStrategies] = device_phases(
        HostActionExecutionStrategy,
        HostMemoryUpdateStrategy,
        llm=HostLLMInteractionStrategy,
        data=DesktopDataCollectionStrategy,
    )

    def _setup_middleware(self) -> None:
        self.middleware_chain = [AgentStepLoggingMiddleware("HostAgent")]

    def _seed_values(self) -> dict[str, Any]:
        """The shared step fields and the agent type."""
        values = super()._seed_values()
        values["agent_type"] = "HostAgent"
        return values
