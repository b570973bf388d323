"""LinuxAgentProcessor: LLM_INTERACTION → ACTION_EXECUTION → MEMORY_UPDATE (no data collection)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from starweave.agent import ContextNames, ProcessingPhase, ProcessorTemplate
from starweave.agent.processor import PhaseStrategies
from starweave.agents.common import action_failure, device_phases
from starweave.agents.linux.local import LinuxProcessorContext
from starweave.agents.linux.middleware import LinuxLoggingMiddleware
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.agents.linux.strategies import (
    LinuxActionExecutionStrategy,
    LinuxLLMInteractionStrategy,
    LinuxMemoryUpdateStrategy,
)


class LinuxAgentProcessor(ProcessorTemplate):
    """The LinuxAgent's step: the model is fail-fast, action and memory are not (spec C §4.3)."""

    processor_context_class = LinuxProcessorContext
    #: A crash while running the tool call ends the task.
    failure_status: ClassVar[Mapping[ProcessingPhase, str]] = action_failure(LinuxAgentStatus.FAIL.value)
    phase_strategies: ClassVar[PhaseStrategies] = device_phases(
        LinuxActionExecutionStrategy, LinuxMemoryUpdateStrategy, llm=LinuxLLMInteractionStrategy
    )

    def _setup_middleware(self) -> None:
        self.middleware_chain = [LinuxLoggingMiddleware()]

    def _finalize_processing_context(self) -> None:
        """Promote the step's final answer to the round result."""
        super()._finalize_processing_context()
        result = self.processing_context.local(LinuxProcessorContext).result
        if result:
            self.global_context.set(ContextNames.ROUND_RESULT, result)
