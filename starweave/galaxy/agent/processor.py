"""ConstellationAgentProcessor: LLM_INTERACTION → ACTION_EXECUTION (by weaving mode) → MEMORY_UPDATE."""

from __future__ import annotations

import logging
from typing import Any

from starweave.agent import (
    ContextNames,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    ProcessorMiddleware,
    ProcessorTemplate,
)
from starweave.agent.middleware import publish_step, step_frame
from starweave.errors import InvalidArgumentError
from starweave.galaxy.agent.local import ConstellationProcessorContext
from starweave.galaxy.agent.strategies import ConstellationStrategyFactory
from starweave.galaxy.constellation import TaskConstellation

logger = logging.getLogger(__name__)


def _response_record(processor: ProcessorTemplate, total_time: float) -> dict[str, Any]:
    """The ``response.log`` line of one step: the answer, the calls and their outcome, both DAGs."""
    ctx = processor.processing_context
    local = ctx.local(ConstellationProcessorContext)
    parsed = local.parsed_response
    actions = local.action_info
    results = local.execution_result
    after = ctx.get_global(ContextNames.CONSTELLATION)
    record: dict[str, Any] = parsed.model_dump(mode="json", exclude={"action"}) if parsed is not None else {}
    record.update(
        {
            **step_frame(processor, "ConstellationAgent", total_time, "execution_times"),
            "weaving_mode": local.weaving_mode,
            "status": local.status or processor.agent.status,
            "action": [a.model_dump(mode="json", exclude={"result"}) for a in actions],
            "function_call": [a.function for a in actions],
            "arguments": [a.arguments for a in actions],
            "action_representation": [a.to_representation() for a in actions],
            "action_type": [r.namespace for r in results],
            "results": [r.model_dump(mode="json") for r in results],
            "edit_errors": local.edit_errors,
            "edit_repairs": local.edit_repairs,
            "plan_warnings": local.plan_warnings,
            "device_info": local.device_info,
            "constellation_before": local.constellation_before,
            "constellation_after": after.to_dict() if isinstance(after, TaskConstellation) else None,
        }
    )
    return record


class ConstellationLoggingMiddleware(ProcessorMiddleware):
    """Logs each step and writes its record to the global LOGGER (a JSON-lines writer), if any."""

    async def before_process(self, processor: ProcessorTemplate, context: ProcessingContext) -> None:
        """Log the step's start."""
        logger.info(
            "ConstellationAgent step %s, weaving mode %s, request %r",
            context.get("session_step"),
            context.local(ConstellationProcessorContext).weaving_mode,
            str(context.get("request") or "")[:100],
        )

    async def after_process(self, processor: ProcessorTemplate, result: ProcessingResult) -> None:
        """Write the response-log record."""
        publish_step(processor, _response_record(processor, result.execution_time), show=False)

    async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
        """Log the failure (the state turns it into FAIL)."""
        logger.warning("ConstellationAgent step failed: %s", error)


class ConstellationAgentProcessor(ProcessorTemplate):
    """One ConstellationAgent step; the action strategy depends on the context's WEAVING_MODE."""

    processor_context_class = ConstellationProcessorContext

    def _setup_strategies(self) -> None:
        mode = self.global_context.get(ContextNames.WEAVING_MODE)
        if not mode:
            raise InvalidArgumentError("Weaving mode must be specified in global context")
        factory = ConstellationStrategyFactory
        self.strategies[ProcessingPhase.LLM_INTERACTION] = factory.create_llm_interaction_strategy(True)
        self.strategies[ProcessingPhase.ACTION_EXECUTION] = factory.create_action_execution_strategy(
            mode, False
        )
        self.strategies[ProcessingPhase.MEMORY_UPDATE] = factory.create_memory_update_strategy(False)

    def _setup_middleware(self) -> None:
        self.middleware_chain = [ConstellationLoggingMiddleware()]

    def _seed_values(self) -> dict[str, Any]:
        before = self.global_context.get(ContextNames.CONSTELLATION)
        return {
            **super()._seed_values(),
            "agent_name": self.agent.name,
            "weaving_mode": str(self.global_context.get(ContextNames.WEAVING_MODE)),
            "device_info": self.global_context.get(ContextNames.DEVICE_INFO) or [],
            "constellation_before": before.to_dict() if isinstance(before, TaskConstellation) else None,
        }

    def _finalize_processing_context(self) -> None:
        parsed = self.processing_context.local(ConstellationProcessorContext).parsed_response
        if parsed is not None and parsed.results:
            self.global_context.set(ContextNames.ROUND_RESULT, parsed.results)
