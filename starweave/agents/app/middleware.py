"""Step logging for the HostAgent and the AppAgent: one ``response.log`` line per step, the console panel."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from starweave.agent import ProcessingResult, ProcessorMiddleware
from starweave.agent.middleware import publish_step, step_frame
from starweave.agents.app.local import WindowStepContext

if TYPE_CHECKING:
    from starweave.agent import ProcessingContext, ProcessorTemplate

logger = logging.getLogger(__name__)

#: Local keys copied into the step record when set.
RECORD_KEYS = (
    "observation",
    "thought",
    "status",
    "comment",
    "result",
    "output",
    "note",
    "subtask",
    "plan",
    "function_name",
    "call",
    "function_arguments",
    "selected_application_root",
    "assigned_third_party_agent",
    "clean_screenshot_path",
    "annotated_screenshot_path",
    "desktop_screenshot_path",
    "selected_control_screenshot_path",
    "multi_action",
)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def step_record(processor: ProcessorTemplate, agent_type: str, total_time: float) -> dict[str, Any]:
    """The response-log line of one step."""
    ctx: ProcessingContext = processor.processing_context
    local = ctx.local(WindowStepContext)
    # The AppAgent's and the HostAgent's contexts each declare some of these keys.
    values = {key: getattr(local, key, None) for key in RECORD_KEYS}
    record: dict[str, Any] = {key: _jsonable(value) for key, value in values.items() if value is not None}
    record.setdefault("status", processor.agent.status)
    record.update(
        {
            **step_frame(processor, agent_type, total_time),
            "action": _jsonable(getattr(local, "action", None)),
        }
    )
    return record


class AgentStepLoggingMiddleware(ProcessorMiddleware):
    """Writes one record per step to the session's response log and shows it on the console view."""

    def __init__(self, agent_type: str, name: str | None = None) -> None:
        super().__init__(name)
        self.agent_type = agent_type

    async def before_process(self, processor: ProcessorTemplate, context: ProcessingContext) -> None:
        """Log the step's start."""
        logger.info("%s %s step %s", self.agent_type, processor.agent.name, context.get("session_step"))

    async def after_process(self, processor: ProcessorTemplate, result: ProcessingResult) -> None:
        """Write and show the step."""
        publish_step(processor, step_record(processor, self.agent_type, result.execution_time))

    async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
        """Record the failed step."""
        logger.info("%s step failed: %s", self.agent_type, error)
        record = step_record(processor, self.agent_type, 0.0)
        publish_step(processor, {**record, "status": "ERROR", "error": str(error)}, show=False)
