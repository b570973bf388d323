"""What the orchestrator needs from a device manager (ConstellationDeviceManager satisfies it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from starweave.galaxy.devices.profile import AgentProfile
from starweave.galaxy.types import ExecutionResult

StartedCallback = Callable[[], Awaitable[None]]


@runtime_checkable
class DeviceExecutor(Protocol):
    """Runs one task on one device; serialises tasks per device itself (FIFO per device).

    ``assign_task_to_device`` must not raise for device problems: it returns an ExecutionResult
    with status "failed" or "timeout". Cancelling the awaiting coroutine withdraws the task.
    """

    async def assign_task_to_device(
        self,
        task_id: str,
        device_id: str,
        task_description: str,
        task_data: dict[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the device manager's contract
        on_started: StartedCallback | None = None,
    ) -> ExecutionResult:
        """Run ``task_description`` on ``device_id`` and return the outcome; ``on_started`` is
        awaited when the device actually starts the task (after any queue wait)."""
        ...

    def get_connected_devices(self) -> list[str]:
        """Ids of devices that can take tasks now."""
        ...

    def get_device_info(self, device_id: str) -> AgentProfile | None:
        """The device's profile, or None for an unknown id."""
        ...
