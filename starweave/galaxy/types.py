"""Result types shared by Galaxy's device manager, orchestrator and agent (spec E §16 types.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ExecutionResult:
    """The outcome of one task on one device.

    ``status`` is "completed" or "failed" (the device agent's verdict), "cancelled" when Galaxy
    withdrew the task, or "timeout". ``result`` is what the device reported (its final answer and
    round results); ``error`` says why it failed.
    """

    task_id: str
    status: str
    result: Any = None
    error: str | None = None
    device_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    start_time: float | None = None
    end_time: float | None = None

    @property
    def execution_time(self) -> float | None:
        """Seconds between start and end, when both are known."""
        if self.start_time is None or self.end_time is None:
            return None
        return self.end_time - self.start_time

    @property
    def is_successful(self) -> bool:
        """True when the device completed the task without an error."""
        return self.status in ("completed", "success") and self.error is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (result kept as is; callers serialise with ``default=str``)."""
        return {
            "task_id": self.task_id,
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "device_id": self.device_id,
            "metadata": self.metadata,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "execution_time": self.execution_time,
        }


def now() -> float:
    """Epoch seconds (one clock for every Galaxy timestamp)."""
    return time.time()
