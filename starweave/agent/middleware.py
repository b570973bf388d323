"""Cross-cutting concerns around a processor run (logging, metrics, error reporting).

``before_process`` runs in registration order, ``after_process`` in reverse order and
``on_error`` on every middleware when an exception escapes the run. The optional per-phase
hooks ``before_phase`` / ``after_phase`` run around each strategy (same ordering rule).
"""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from starweave.agent.context import ContextNames
from starweave.agent.processing import ProcessingContext, ProcessingPhase, ProcessingResult
from starweave.errors import ProcessingException

if TYPE_CHECKING:
    from starweave.agent.processor import ProcessorTemplate


def publish_step(processor: ProcessorTemplate, record: dict[str, Any], show: bool = True) -> None:
    """Write a step's ``record`` to the session's response log (the global LOGGER, if any) and,
    with ``show``, show it on the agent's console view (if it has one) with its ``output``."""
    writer = processor.global_context.get(ContextNames.LOGGER)
    if writer is not None:
        writer.write(record)
    view = getattr(processor.agent, "view", None)
    if show and view is not None:
        view.step(record, str(record.get("output") or ""))


def step_frame(
    processor: ProcessorTemplate, agent_type: str, total_time: float, times_key: str = "time_cost"
) -> dict[str, Any]:
    """The keys every agent's ``response.log`` line has: which step of which agent it was, the
    model's cost and tokens, the step's time and each phase's (under ``times_key``, keyed by the
    phase's name, ``LLM_INTERACTION``...)."""
    ctx = processor.processing_context
    local = ctx.local_context
    return {
        "step": local.session_step,
        "round_step": local.round_step,
        "round_num": local.round_num,
        "agent_step": local.agent_step,
        "request": local.request,
        "agent_type": agent_type,
        "agent_name": processor.agent.name,
        "cost": local.llm_cost or 0.0,
        "tokens": local.tokens or 0,
        "total_time": total_time,
        times_key: {phase.name: r.execution_time for phase, r in ctx.phase_results.items()},
    }


class ProcessorMiddleware(ABC):
    """Hooks wrapped around one processor run."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    @abstractmethod
    async def before_process(self, processor: ProcessorTemplate, context: ProcessingContext) -> None:
        """Called once before the first phase."""

    @abstractmethod
    async def after_process(self, processor: ProcessorTemplate, result: ProcessingResult) -> None:
        """Called once after the last phase with the run's overall result."""

    @abstractmethod
    async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
        """Called when an exception escapes the run (it is re-raised afterwards)."""

    async def before_phase(
        self, processor: ProcessorTemplate, phase: ProcessingPhase, context: ProcessingContext
    ) -> None:
        """Optional: called before each phase's strategy runs."""
        return None

    async def after_phase(
        self, processor: ProcessorTemplate, phase: ProcessingPhase, result: ProcessingResult
    ) -> None:
        """Optional: called after each phase's strategy returned."""
        return None


class EnhancedLoggingMiddleware(ProcessorMiddleware):
    """Logs each run and writes one JSON line per step to the global ``LOGGER``, if any.

    ``LOGGER`` is any object with ``write(str)`` (an open text file, for instance).
    """

    def __init__(self, log_level: int = logging.INFO, name: str | None = None) -> None:
        super().__init__(name)
        self.logger = logging.getLogger(f"{type(self).__name__}.{self.name}")
        self.log_level = log_level

    async def before_process(self, processor: ProcessorTemplate, context: ProcessingContext) -> None:
        """Log the round, step and processor."""
        round_num = int(context.get("round_num", 0) or 0)
        round_step = int(context.get("round_step", 0) or 0)
        self.logger.log(
            self.log_level,
            "Starting processing: Round %d, Step %d, Processor: %s",
            round_num + 1,
            round_step + 1,
            type(processor).__name__,
        )

    async def after_process(self, processor: ProcessorTemplate, result: ProcessingResult) -> None:
        """Log the outcome, record timings in the local context and write the step log line."""
        if result.success:
            self.logger.log(self.log_level, "Processing completed in %.2fs", result.execution_time)
        else:
            self.logger.warning("Processing completed with failures: %s", result.error)
        pctx = processor.processing_context
        local = pctx.local_context
        local.total_time = result.execution_time
        local.execution_times = {phase.name: r.execution_time for phase, r in pctx.phase_results.items()}
        writer: Any = pctx.global_context.get(ContextNames.LOGGER)
        if writer is None:
            return
        line = json.dumps(to_jsonable_python(local.to_dict(selective=True), fallback=str), ensure_ascii=False)
        # The writer may be a real file: keep its I/O off the event loop.
        await asyncio.to_thread(writer.write, line + "\n")

    async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
        """Log the error with its phase, context data and traceback."""
        name = type(processor).__name__
        if isinstance(error, ProcessingException):
            original = error.original_exception
            self.logger.error(
                "ProcessingException in %s: phase=%s message=%s context=%s original=%r",
                name,
                error.phase,
                error,
                error.context_data,
                original,
            )
            if original is not None:
                self.logger.info("Original traceback:\n%s", "".join(traceback.format_exception(original)))
        else:
            self.logger.error(
                "Unexpected %s in %s: %s\n%s",
                type(error).__name__,
                name,
                error,
                "".join(traceback.format_exception(error)),
            )
