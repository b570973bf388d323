"""TaskConfiguration: execution settings a TaskStar can take as a bundle (reference ``config=``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.errors import InvalidArgumentError

from .enums import TaskPriority


@dataclass(frozen=True)
class TaskConfiguration:
    """Timeout, retries (count and delay in seconds), priority and free-form metadata.

    A TaskStar built with ``config`` takes these values wherever its own argument was left at its
    default; explicit arguments win.
    """

    timeout: float | None = None
    retry_count: int = 0
    retry_delay: float = 1.0
    priority: TaskPriority | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.timeout is not None and self.timeout <= 0:
            raise InvalidArgumentError(f"TaskConfiguration.timeout must be positive, got {self.timeout}")
        if self.retry_count < 0:
            raise InvalidArgumentError(f"TaskConfiguration.retry_count must be >= 0, got {self.retry_count}")
        if self.retry_delay < 0:
            raise InvalidArgumentError(f"TaskConfiguration.retry_delay must be >= 0, got {self.retry_delay}")
