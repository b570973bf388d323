"""TaskStar: one node (an atomic task for one device) of a task constellation."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from time import time
from typing import Any, Protocol, overload

from starweave.agents.common import NO_TIPS
from starweave.errors import InvalidTransitionError, ModificationError

from .enums import (
    MODIFIABLE_STATUSES,
    TERMINAL_STATUSES,
    DeviceType,
    TaskPriority,
    TaskStatus,
    parse_enum,
)
from .task_config import TaskConfiguration


class TaskOwner(Protocol):
    """What a task needs from the constellation that holds it."""

    def _guard_status_change(self, task: TaskStar, new: TaskStatus) -> None: ...

    def _on_status_change(self, task: TaskStar, old: TaskStatus, new: TaskStatus) -> None: ...


def utc_now() -> datetime:
    """Return the current time, timezone-aware UTC."""
    return datetime.now(UTC)


def short_name(description: str, limit: int = 48) -> str:
    """A task name made from its description: the first sentence, cut at a word boundary."""
    text = " ".join(description.split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].rstrip(".!?")
    if len(first) <= limit:
        return first or "task"
    cut = first[:limit].rsplit(" ", 1)[0]
    return (cut or first[:limit]) + "…"


class UtcTimestamp:
    """A datetime attribute stored in a slot as a float epoch.

    Taking ``time.time()`` costs a seventh of ``datetime.now(UTC)``, which matters when a bulk
    build creates hundreds of thousands of tasks and lines; the datetime is made on reading.
    Naive datetimes are taken as UTC.
    """

    def __init__(self, slot: str) -> None:
        self._slot = slot

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> UtcTimestamp: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> datetime: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> UtcTimestamp | datetime:
        if obj is None:
            return self
        return datetime.fromtimestamp(getattr(obj, self._slot), UTC)

    def __set__(self, obj: object, value: datetime) -> None:
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        setattr(obj, self._slot, value.timestamp())


def _device_type(value: object) -> DeviceType | None:
    return None if value is None or value == "" else parse_enum(DeviceType, value)


class TaskStar:
    """A task node: what to do (description, tips), where (device) and its execution state.

    Descriptive fields may be changed only while the task is PENDING or WAITING_DEPENDENCY
    (invariant I3); in particular the device assignment is frozen once the task runs (I1).
    """

    __slots__ = (
        "_config",
        "_created",
        "_current_retry",
        "_description",
        "_device_type",
        "_error",
        "_execution_end_time",
        "_execution_start_time",
        "_expected_output_type",
        "_in",
        "_name",
        "_out",
        "_owner",
        "_priority",
        "_rank",
        "_result",
        "_retry_count",
        "_status",
        "_target_device_id",
        "_task_data",
        "_task_id",
        "_timeout",
        "_tips",
        "_updated",
        "_waiting",
    )

    def __init__(
        self,
        task_id: str | None = None,
        name: str = "",
        description: str = "",
        tips: list[str] | None = None,
        target_device_id: str | None = None,
        device_type: DeviceType | None = None,
        priority: TaskPriority = TaskPriority.MEDIUM,
        timeout: float | None = None,
        retry_count: int = 0,
        task_data: dict[str, Any] | None = None,
        expected_output_type: str | None = None,
        config: TaskConfiguration | None = None,
    ) -> None:
        if config is not None:
            timeout = timeout if timeout is not None else config.timeout
            retry_count = retry_count or config.retry_count
            if priority is TaskPriority.MEDIUM and config.priority is not None:
                priority = config.priority
        self._config = config
        self._task_id = task_id if task_id is not None else str(uuid.uuid4())
        self._name = name or f"task_{self._task_id[:8]}"
        self._description = description
        self._tips: tuple[str, ...] = tuple(tips) if tips else ()
        self._target_device_id = target_device_id
        # Enum fields accept members, values or names (any case), like the wire schemas.
        self._device_type = _device_type(device_type)
        self._priority = priority if type(priority) is TaskPriority else parse_enum(TaskPriority, priority)
        self._timeout = timeout
        self._retry_count = retry_count
        self._current_retry = 0
        # Containers are created lazily: a large build allocates (and GC-tracks) far fewer objects.
        self._task_data: dict[str, Any] | None = dict(task_data) if task_data else None
        self._expected_output_type = expected_output_type
        self._status = TaskStatus.PENDING
        self._result: Any = None
        self._error: Exception | None = None
        self._execution_start_time: datetime | None = None
        self._execution_end_time: datetime | None = None
        self._created = self._updated = time()
        # Maintained by the owning constellation: how many incoming lines are unsatisfied, and the
        # task's place in its graph (see graph.GraphNode).
        self._waiting = 0
        self._owner: TaskOwner | None = None
        self._rank = 0
        self._out: dict[str, str] = {}
        self._in: dict[str, str] = {}

    # ----------------------------------------------------------------- read-only properties
    @property
    def task_id(self) -> str:
        """Unique id of the task."""
        return self._task_id

    @property
    def status(self) -> TaskStatus:
        """Current lifecycle status."""
        return self._status

    @property
    def result(self) -> Any:
        """Result recorded by ``complete_with_success``."""
        return self._result

    @property
    def error(self) -> Exception | None:
        """Error recorded by ``complete_with_failure``."""
        return self._error

    @property
    def current_retry(self) -> int:
        """How many times ``retry()`` was used."""
        return self._current_retry

    @property
    def execution_start_time(self) -> datetime | None:
        """When the task started running."""
        return self._execution_start_time

    @property
    def execution_end_time(self) -> datetime | None:
        """When the task reached a terminal status after running."""
        return self._execution_end_time

    @property
    def execution_duration(self) -> float | None:
        """Run time in seconds, or None when not both start and end are known."""
        if self._execution_start_time is None or self._execution_end_time is None:
            return None
        return (self._execution_end_time - self._execution_start_time).total_seconds()

    created_at = UtcTimestamp("_created")
    """Creation time (UTC)."""
    updated_at = UtcTimestamp("_updated")
    """Last change time (UTC)."""

    @property
    def is_terminal(self) -> bool:
        """True for COMPLETED, FAILED and CANCELLED."""
        return self._status in TERMINAL_STATUSES

    @property
    def is_modifiable(self) -> bool:
        """True while PENDING or WAITING_DEPENDENCY (invariant I3)."""
        return self._status in MODIFIABLE_STATUSES

    @property
    def is_ready_to_execute(self) -> bool:
        """True when PENDING and no incoming dependency is unsatisfied."""
        return self._status is TaskStatus.PENDING and not self._waiting

    # ----------------------------------------------------------------- guarded setters
    def _check_modifiable(self, what: str) -> None:
        if not self.is_modifiable:
            raise ModificationError(
                f"Cannot modify {what} of {self._status.value} task {self._task_id}: only pending or "
                "waiting_dependency tasks may be changed; add a new task instead"
            )

    def _touch(self) -> None:
        self._updated = time()

    @property
    def name(self) -> str:
        """Short human-readable name."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._check_modifiable("name")
        self._name = value
        self._touch()

    @property
    def description(self) -> str:
        """What the device agent must do."""
        return self._description

    @description.setter
    def description(self, value: str) -> None:
        self._check_modifiable("description")
        self._description = value
        self._touch()

    @property
    def task_description(self) -> str:
        """Alias of ``description`` (reference name)."""
        return self._description

    @property
    def tips(self) -> list[str]:
        """Hints for the device agent (a copy)."""
        return list(self._tips)

    @tips.setter
    def tips(self, value: list[str] | None) -> None:
        self._check_modifiable("tips")
        self._tips = tuple(value) if value else ()
        self._touch()

    @property
    def target_device_id(self) -> str | None:
        """Device the task is assigned to (invariant I1: frozen once running)."""
        return self._target_device_id

    @target_device_id.setter
    def target_device_id(self, value: str | None) -> None:
        self._check_modifiable("device assignment")
        self._target_device_id = value
        self._touch()

    @property
    def device_type(self) -> DeviceType | None:
        """Kind of device wanted."""
        return self._device_type

    @device_type.setter
    def device_type(self, value: DeviceType | None) -> None:
        self._check_modifiable("device type")
        self._device_type = _device_type(value)
        self._touch()

    @property
    def priority(self) -> TaskPriority:
        """Scheduling priority."""
        return self._priority

    @priority.setter
    def priority(self, value: TaskPriority) -> None:
        self._check_modifiable("priority")
        self._priority = parse_enum(TaskPriority, value)
        self._touch()

    @property
    def timeout(self) -> float | None:
        """Per-task timeout in seconds."""
        return self._timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._check_modifiable("timeout")
        self._timeout = value
        self._touch()

    @property
    def retry_count(self) -> int:
        """How many retries are allowed."""
        return self._retry_count

    @property
    def task_data(self) -> dict[str, Any]:
        """Extra data for the device (a copy)."""
        return dict(self._task_data) if self._task_data else {}

    @property
    def config(self) -> TaskConfiguration | None:
        """The configuration bundle given at construction, if any."""
        return self._config

    @property
    def retry_delay(self) -> float:
        """Seconds to wait before a retry (from ``config``; 1.0 by default)."""
        return self._config.retry_delay if self._config is not None else 1.0

    @property
    def expected_output_type(self) -> str | None:
        """Free-form description of the expected output."""
        return self._expected_output_type

    def update_task_data(self, data: dict[str, Any]) -> None:
        """Merge ``data`` into ``task_data``."""
        self._check_modifiable("task data")
        self._task_data = {**(self._task_data or {}), **data}
        self._touch()

    # ----------------------------------------------------------------- lifecycle
    def _transition(self, new: TaskStatus) -> None:
        owner = self._owner
        if owner is not None:
            owner._guard_status_change(self, new)
        old = self._status
        self._status = new
        self._touch()
        if owner is not None:
            owner._on_status_change(self, old, new)

    def start_execution(self) -> None:
        """PENDING -> RUNNING; refused while a dependency is unsatisfied."""
        if self._status is not TaskStatus.PENDING or self._waiting:
            state = self._status.name
            if self._waiting and self._status is TaskStatus.PENDING:
                state = "PENDING with unsatisfied dependencies"
            raise InvalidTransitionError(f"Cannot start task in status {state}")
        self._execution_start_time = utc_now()
        self._transition(TaskStatus.RUNNING)

    def mark_started(self) -> None:
        """Record now as the start of a RUNNING task: the moment its device took it, which may be
        after a wait in the device's queue."""
        if self._status is not TaskStatus.RUNNING:
            raise InvalidTransitionError(f"Cannot mark task started in status {self._status.name}")
        self._execution_start_time = utc_now()
        self._touch()

    def complete_with_success(self, result: Any = None) -> None:
        """RUNNING -> COMPLETED, recording ``result``."""
        if self._status is not TaskStatus.RUNNING:
            raise InvalidTransitionError(f"Cannot complete task in status {self._status.name}")
        self._result = result
        self._execution_end_time = utc_now()
        self._transition(TaskStatus.COMPLETED)

    def complete_with_failure(self, error: Exception | str) -> None:
        """RUNNING -> FAILED, recording ``error``."""
        if self._status is not TaskStatus.RUNNING:
            raise InvalidTransitionError(f"Cannot fail task in status {self._status.name}")
        self._error = error if isinstance(error, Exception) else Exception(error)
        self._execution_end_time = utc_now()
        self._transition(TaskStatus.FAILED)

    def cancel(self) -> None:
        """Any non-terminal status -> CANCELLED."""
        if self.is_terminal:
            raise InvalidTransitionError(f"Cannot cancel task in status {self._status.name}")
        if self._status is TaskStatus.RUNNING:
            self._execution_end_time = utc_now()
        self._transition(TaskStatus.CANCELLED)

    def should_retry(self) -> bool:
        """True when FAILED and retries remain."""
        return self._status is TaskStatus.FAILED and self._current_retry < self._retry_count

    def retry(self) -> None:
        """FAILED -> PENDING when ``should_retry()``; clears error and times."""
        if not self.should_retry():
            raise InvalidTransitionError(
                f"Cannot retry task {self._task_id} in status {self._status.name} "
                f"(retries used {self._current_retry} of {self._retry_count})"
            )
        self._transition(TaskStatus.PENDING)
        self._error = None
        self._execution_start_time = None
        self._execution_end_time = None
        self._current_retry += 1

    # ----------------------------------------------------------------- validation / output
    def get_validation_errors(self) -> list[str]:
        """Return every validation problem (empty list when valid)."""
        errors: list[str] = []
        if not isinstance(self._task_id, str) or not self._task_id:
            errors.append("Task ID must be a non-empty string")
        if not isinstance(self._name, str) or not self._name:
            errors.append("Task name must be a non-empty string")
        if not isinstance(self._description, str) or not self._description:
            errors.append("Task description must be a non-empty string")
        if self._timeout is not None and (
            isinstance(self._timeout, bool)
            or not isinstance(self._timeout, int | float)
            or self._timeout <= 0
        ):
            errors.append("Timeout must be a positive number")
        if (
            isinstance(self._retry_count, bool)
            or not isinstance(self._retry_count, int)
            or self._retry_count < 0
        ):
            errors.append("Retry count must be a non-negative integer")
        if not isinstance(self._priority, TaskPriority):
            errors.append("Priority must be a TaskPriority")
        return errors

    def validate(self) -> bool:
        """True when ``get_validation_errors()`` is empty."""
        return not self.get_validation_errors()

    def to_request_string(self) -> str:
        """The exact text sent to a device agent: description and tips only."""
        tips = "\n".join(f" - {tip}" for tip in self._tips) if self._tips else NO_TIPS
        return f"Task Description: {self._description}\nTips for Completion:\n{tips}"

    def to_dict(self) -> dict[str, Any]:
        """The reference's dictionary form (see ``serialization``)."""
        from .serialization import task_to_dict

        return task_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskStar:
        """Rebuild from ``to_dict()`` output (lenient about enum spellings)."""
        from .serialization import task_from_dict

        return task_from_dict(data)

    def __repr__(self) -> str:
        return f"TaskStar(id={self._task_id!r}, name={self._name!r}, status={self._status.value})"
