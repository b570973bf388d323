"""ConstellationProgressObserver: feeds task and constellation completions to the agent (spec B §7.2).

The ConstellationAgent's CONTINUE state waits on its completion queues; this observer is what
fills them. It must return quickly (the bus awaits it), so it only enqueues.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from starweave.galaxy.events import Event, EventType, TaskEvent

log = logging.getLogger("starweave.galaxy.observers.progress")


class CompletionSink(Protocol):
    """What the observer needs from the agent."""

    async def add_task_completion_event(self, event: TaskEvent) -> None:
        """Queue a TASK_COMPLETED / TASK_FAILED event."""
        ...

    async def add_constellation_completion_event(self, event: Event) -> None:
        """Queue a CONSTELLATION_COMPLETED event."""
        ...


class ConstellationProgressObserver:
    """Records each task's latest outcome and wakes the agent on completions."""

    def __init__(self, agent: CompletionSink, logger: logging.Logger | None = None) -> None:
        self.agent = agent
        self.logger = logger or log
        self.task_results: dict[str, dict[str, Any]] = {}

    async def on_event(self, event: Event) -> None:
        """Handle task events and CONSTELLATION_COMPLETED; failures are logged, never raised."""
        try:
            if isinstance(event, TaskEvent):
                await self._on_task_event(event)
            elif event.event_type is EventType.CONSTELLATION_COMPLETED:
                await self.agent.add_constellation_completion_event(event)
        except Exception:  # the reference's contract: a broken agent queue must not break the bus
            self.logger.exception("Progress observer failed on %s", event.event_type.value)

    async def _on_task_event(self, event: TaskEvent) -> None:
        self.task_results[event.task_id] = {
            "task_id": event.task_id,
            "status": event.status,
            "result": event.result,
            "error": event.error,
            "timestamp": event.timestamp,
        }
        self.logger.info(
            "Task progress: %s -> %s. Event Type: %s", event.task_id, event.status, event.event_type.value
        )
        if event.event_type in (EventType.TASK_COMPLETED, EventType.TASK_FAILED):
            await self.agent.add_task_completion_event(event)
