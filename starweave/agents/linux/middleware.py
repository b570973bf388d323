"""LinuxLoggingMiddleware: the step's response-log line, the console panel and the thinking spinner."""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from starweave.agent import (
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    ProcessorMiddleware,
)
from starweave.agent.middleware import publish_step, step_frame
from starweave.agents.linux.local import LinuxProcessorContext
from starweave.commands import Result

if TYPE_CHECKING:
    from starweave.agent import ProcessorTemplate

logger = logging.getLogger(__name__)

RESPONSE_KEYS = ("observation", "thought", "action", "call", "status", "result", "note", "output")


def step_record(processor: ProcessorTemplate, total_time: float) -> dict[str, Any]:
    """The response-log line of one step: the answer, the outcome and the step metadata."""
    ctx = processor.processing_context
    local = ctx.local(LinuxProcessorContext)
    record: dict[str, Any] = {key: getattr(local, key) for key in RESPONSE_KEYS}
    record["status"] = record["status"] or processor.agent.status
    record.update(
        {
            **step_frame(processor, "LinuxAgent", total_time),
            "results": [r.model_dump(mode="json") if isinstance(r, Result) else r for r in local.results],
            "llm_time": local.llm_time or 0.0,
        }
    )
    return record


class LinuxLoggingMiddleware(ProcessorMiddleware):
    """Writes ``response.log`` and shows each step on the console."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self._spinner: AbstractContextManager[Any] | None = None

    @staticmethod
    def starting_message(request: str) -> str:
        """The reference's opening line for a Linux task."""
        return f"Completing the user request [{request}] on Linux."

    async def before_process(self, processor: ProcessorTemplate, context: ProcessingContext) -> None:
        """Log the step's start."""
        logger.info(
            "%s step %s", self.starting_message(str(context.get("request"))), context.get("session_step")
        )

    async def before_phase(
        self, processor: ProcessorTemplate, phase: ProcessingPhase, context: ProcessingContext
    ) -> None:
        """Show a spinner while the model thinks."""
        view = getattr(processor.agent, "view", None)
        if phase is ProcessingPhase.LLM_INTERACTION and view is not None:
            self._spinner = view.thinking(int(context.get("session_step") or 0))
            self._spinner.__enter__()

    async def after_phase(
        self, processor: ProcessorTemplate, phase: ProcessingPhase, result: ProcessingResult
    ) -> None:
        """Stop the spinner."""
        self._stop_spinner()

    async def after_process(self, processor: ProcessorTemplate, result: ProcessingResult) -> None:
        """Write the step record and print it."""
        publish_step(processor, step_record(processor, result.execution_time))

    async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
        """Stop the spinner and record the failure."""
        self._stop_spinner()
        logger.info("LinuxAgent step failed: %s", error)
        record = step_record(processor, 0.0)
        publish_step(processor, {**record, "status": "FAIL", "error": str(error)}, show=False)
        view = getattr(processor.agent, "view", None)
        if view is not None:
            view.step({**step_record(processor, 0.0), "status": "FAIL", "note": str(error)}, "")

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.__exit__(None, None, None)
            self._spinner = None
