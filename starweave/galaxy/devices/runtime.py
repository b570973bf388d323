"""What the device manager keeps per device, and how a TASK_END becomes an ExecutionResult."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starweave.aip.endpoints import ConstellationEndpoint
from starweave.aip.messages import ServerMessage, TaskStatus
from starweave.galaxy.devices.queue import QueuedTask
from starweave.galaxy.types import ExecutionResult, now

__all__ = ["DeviceRuntime", "ManagedEndpoint", "failed_result", "result_from_task_end", "safe_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ManagedEndpoint(ConstellationEndpoint):
    """A ConstellationEndpoint that tells the device manager when a connection is lost.

    The endpoint fails the pending tasks itself (``super()``); reconnection is the manager's job
    (it needs to know when it succeeded to resume the device's queue).
    """

    def __init__(self, *args: Any, on_lost: Callable[[str, str], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_lost = on_lost

    async def on_device_disconnected(self, device_id: str) -> None:
        """Fail the pending tasks, then report the loss with the endpoint's reason."""
        await super().on_device_disconnected(device_id)
        self._on_lost(device_id, self.last_error(device_id) or "connection to the agent server lost")


@dataclass
class DeviceRuntime:
    """The manager's live state for one device (its profile lives in the DeviceRegistry)."""

    endpoint: ManagedEndpoint
    current: QueuedTask | None = None
    runner: asyncio.Task[None] | None = None
    monitor: asyncio.Task[None] | None = None
    reconnect: asyncio.Task[None] | None = None
    lost: asyncio.Task[None] | None = None
    # Set while the device is being brought back after a loss (tasks may keep queuing meanwhile).
    recovering: bool = False
    ever_connected: bool = False
    # The devices file gives no key: a server of this user's on loopback is sent its local token,
    # read afresh at every attempt (a restarted server has a new one).
    local_token: bool = False
    # Set by an explicit disconnect: losses reported afterwards are the disconnect's own doing.
    disconnecting: bool = False
    last_error: str | None = None
    runs: int = 0

    def background(self) -> list[asyncio.Task[None]]:
        """The device's background tasks that are still running."""
        tasks = (self.monitor, self.reconnect, self.lost)
        return [t for t in tasks if t is not None and not t.done()]


def safe_name(text: str) -> str:
    """``text`` with every character the server refuses in task names replaced by ``_``."""
    cleaned = _UNSAFE.sub("_", text).lstrip(".")
    return cleaned or "task"


def failed_result(
    task: QueuedTask,
    error: str,
    status: str = "failed",
    start_time: float | None = None,
    **metadata: Any,
) -> ExecutionResult:
    """A result for a task that did not complete (never raises, always names the device)."""
    return ExecutionResult(
        task_id=task.task_id,
        status=status,
        error=error,
        device_id=task.device_id,
        metadata={"device_id": task.device_id, **metadata},
        start_time=start_time,
        end_time=now(),
    )


def result_from_task_end(
    task: QueuedTask, end: ServerMessage, start_time: float, metadata: dict[str, Any]
) -> ExecutionResult:
    """The device's verdict: ``result`` is what its TASK_END carried; ``error`` why it failed."""
    payload = end.result
    if end.status == TaskStatus.COMPLETED:
        status, error = "completed", None
    else:
        status = "failed"
        error = end.error or _payload_error(payload)
    return ExecutionResult(
        task_id=task.task_id,
        status=status,
        result=payload,
        error=error,
        device_id=task.device_id,
        metadata={**metadata, "server_status": end.status.value},
        start_time=start_time,
        end_time=now(),
    )


def _payload_error(payload: Any) -> str:
    """Why the device failed when its TASK_END names no error (older servers): the session's
    recorded error, else the agent's own last answer, else its status."""
    if isinstance(payload, dict):
        if str(payload.get("error") or "").strip():
            return str(payload["error"]).strip()
        answer = str(payload.get("result") or "").strip()
        if payload.get("status"):
            status = payload["status"]
            return f"the device agent ended with status {status}" + (f": {answer}" if answer else "")
        if answer:
            return answer
    return "the device agent reported a failure without details"
