"""The orchestrator's events, with the payloads of spec B §7.1 (plus a few extra keys)."""

from __future__ import annotations

import time
from typing import Any

from starweave.galaxy.constellation import TaskConstellation
from starweave.galaxy.events import ConstellationEvent, EventBus, EventType, TaskEvent
from starweave.galaxy.types import ExecutionResult


class OrchestratorEvents:
    """Publishes task and constellation events on one bus under one source id."""

    def __init__(self, bus: EventBus, source_id: str) -> None:
        self.bus = bus
        self.source_id = source_id

    async def task_started(
        self, constellation: TaskConstellation, task_id: str, device_id: str | None
    ) -> None:
        """TASK_STARTED: data{constellation_id, device_id}; status "running"."""
        await self.bus.publish_event(
            TaskEvent(
                event_type=EventType.TASK_STARTED,
                source_id=self.source_id,
                timestamp=time.time(),
                data={"constellation_id": constellation.constellation_id, "device_id": device_id},
                task_id=task_id,
                status="running",
            )
        )

    async def task_ended(
        self,
        constellation: TaskConstellation,
        result: ExecutionResult,
        newly_ready: list[str],
        success: bool,
    ) -> None:
        """TASK_COMPLETED / TASK_FAILED: data{constellation_id, newly_ready_tasks, constellation}
        (the constellation is included on every path, unlike the reference)."""
        await self.bus.publish_event(
            TaskEvent(
                event_type=EventType.TASK_COMPLETED if success else EventType.TASK_FAILED,
                source_id=self.source_id,
                timestamp=time.time(),
                data={
                    "constellation_id": constellation.constellation_id,
                    "newly_ready_tasks": newly_ready,
                    "constellation": constellation,
                    "device_id": result.device_id,
                },
                task_id=result.task_id,
                status=result.status,
                result=result,
                error=result.error,
            )
        )

    async def constellation_started(
        self, constellation: TaskConstellation, strategy: str | None, prepare_start: float
    ) -> None:
        """CONSTELLATION_STARTED with the constellation and the preparation timings."""
        end = time.time()
        await self.bus.publish_event(
            ConstellationEvent(
                event_type=EventType.CONSTELLATION_STARTED,
                source_id=self.source_id,
                timestamp=end,
                data={
                    "total_tasks": constellation.task_count,
                    "assignment_strategy": strategy,
                    "constellation": constellation,
                    "processing_start_time": prepare_start,
                    "processing_end_time": end,
                    "processing_duration": end - prepare_start,
                },
                constellation_id=constellation.constellation_id,
                constellation_state="executing",
                new_ready_tasks=[t.task_id for t in constellation.get_ready_tasks()],
            )
        )

    async def constellation_completed(
        self,
        constellation: TaskConstellation,
        statistics: dict[str, Any],
        started: float,
        status: str,
    ) -> None:
        """CONSTELLATION_COMPLETED (every run that ends, whatever its tasks' outcome)."""
        await self.bus.publish_event(
            ConstellationEvent(
                event_type=EventType.CONSTELLATION_COMPLETED,
                source_id=self.source_id,
                timestamp=time.time(),
                data={
                    "total_tasks": constellation.task_count,
                    "statistics": statistics,
                    "execution_duration": time.time() - started,
                    "constellation": constellation,
                    "status": status,
                },
                constellation_id=constellation.constellation_id,
                constellation_state="cancelled" if status == "cancelled" else constellation.state.value,
            )
        )

    async def constellation_failed(self, constellation: TaskConstellation, error: BaseException) -> None:
        """CONSTELLATION_FAILED: orchestration itself broke (not a task failure)."""
        await self.bus.publish_event(
            ConstellationEvent(
                event_type=EventType.CONSTELLATION_FAILED,
                source_id=self.source_id,
                timestamp=time.time(),
                data={"constellation": constellation, "error": f"{type(error).__name__}: {error}"},
                constellation_id=constellation.constellation_id,
                constellation_state="failed",
            )
        )
