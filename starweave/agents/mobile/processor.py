"""MobileAgentProcessor: DATA_COLLECTION → LLM → ACTION_EXECUTION → MEMORY_UPDATE (spec C §4.4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from starweave.agent import ContextNames, ProcessingPhase, ProcessorTemplate
from starweave.agent.processor import PhaseStrategies
from starweave.agents.app.middleware import AgentStepLoggingMiddleware
from starweave.agents.common import action_failure, device_phases
from starweave.agents.mobile.data_strategies import mobile_data_collection
from starweave.agents.mobile.local import MobileProcessorContext
from starweave.agents.mobile.response import MobileAgentStatus
from starweave.agents.mobile.strategies import (
    MobileActionExecutionStrategy,
    MobileLLMInteractionStrategy,
    MobileMemoryUpdateStrategy,
)
from starweave.agents.mobile.tools import AGENT_NAME


class MobileAgentProcessor(ProcessorTemplate):
    """The MobileAgent's step: data collection and the model are fail-fast, action and memory not."""

    processor_context_class = MobileProcessorContext
    #: A crash while running the action ends the task.
    failure_status: ClassVar[Mapping[ProcessingPhase, str]] = action_failure(MobileAgentStatus.FAIL.value)
    external_fields: ClassVar[frozenset[str]] = frozenset({"log_path"})
    phase_strategies: ClassVar[PhaseStrategies] = device_phases(
        MobileActionExecutionStrategy,
        MobileMemoryUpdateStrategy,
        llm=MobileLLMInteractionStrategy,
        data=mobile_data_collection,
    )

    def _setup_middleware(self) -> None:
        self.middleware_chain = [AgentStepLoggingMiddleware(AGENT_NAME)]

    def _seed_values(self) -> dict[str, Any]:
        """The shared step fields and the agent type."""
        return {**super()._seed_values(), "agent_type": AGENT_NAME}

    def _finalize_processing_context(self) -> None:
        """Promote the step's answer to the round result."""
        super()._finalize_processing_context()
        result = self.processing_context.local(MobileProcessorContext).result
        if result:
            self.global_context.set(ContextNames.ROUND_RESULT, result)
