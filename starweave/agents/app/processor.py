"""AppAgentProcessor: DATA_COLLECTION (screenshot + controls) → LLM → ACTION → MEMORY (seed 001)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from starweave.agent import ComposedStrategy, ProcessingPhase, ProcessorTemplate
from starweave.agent.processor import PhaseStrategies
from starweave.agents.app.data_strategies import AppControlInfoStrategy, AppScreenshotCaptureStrategy
from starweave.agents.app.local import AppProcessorContext
from starweave.agents.app.middleware import AgentStepLoggingMiddleware
from starweave.agents.app.response import AppAgentStatus
from starweave.agents.app.strategies import (
    AppActionExecutionStrategy,
    AppLLMInteractionStrategy,
    AppMemoryUpdateStrategy,
)
from starweave.agents.common import action_failure, device_phases


class AppAgentProcessor(ProcessorTemplate):
    """The AppAgent's step: data collection and the model are fail-fast, action and memory are not."""

    processor_context_class = AppProcessorContext
    #: A crash while running the actions is the step's ERROR.
    failure_status: ClassVar[Mapping[ProcessingPhase, str]] = action_failure(AppAgentStatus.ERROR.value)
    external_fields: ClassVar[frozenset[str]] = frozenset({"app_root", "log_path", "session_step"})

    phase_strategies: ClassVar[PhaseStrategies] = device_phases(
        AppActionExecutionStrategy,
        AppMemoryUpdateStrategy,
        llm=AppLLMInteractionStrategy,
        data=lambda: ComposedStrategy(
            strategies=[AppScreenshotCaptureStrategy(), AppControlInfoStrategy()],
            name="AppDataCollectionStrategy",
            fail_fast=True,
        ),
    )

    def _setup_middleware(self) -> None:
        self.middleware_chain = [AgentStepLoggingMiddleware("AppAgent")]

    def _seed_values(self) -> dict[str, Any]:
        """The shared step fields, the application and the agent type."""
        values = super()._seed_values()
        values["app_root"] = getattr(self.agent, "app_root_name", "") or ""
        values["subtask"] = getattr(self.agent, "subtask", "") or values.get("subtask") or ""
        values["agent_type"] = "AppAgent"
        return values
