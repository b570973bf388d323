"""Enumerations of the task-constellation model (values as in the reference)."""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import TypeVar

from starweave.errors import InvalidArgumentError


class TaskStatus(StrEnum):
    """Lifecycle status of a TaskStar."""

    PENDING = "pending"
    WAITING_DEPENDENCY = "waiting_dependency"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TaskPriority(int, Enum):
    """Scheduling priority; higher value runs first."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4


class DependencyType(StrEnum):
    """Kind of a TaskStarLine (see ``star_line`` for the exact semantics)."""

    UNCONDITIONAL = "unconditional"
    SUCCESS_ONLY = "success_only"
    COMPLETION_ONLY = "completion_only"
    CONDITIONAL = "conditional"


class ConstellationState(StrEnum):
    """Aggregate state of a TaskConstellation."""

    CREATED = "created"
    READY = "ready"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    PARTIALLY_FAILED = "partially_failed"
    CANCELLED = "cancelled"


class DeviceType(StrEnum):
    """Kind of device a task targets."""

    WINDOWS = "windows"
    MACOS = "macos"
    LINUX = "linux"
    #: A Linux desktop device (HostAgent → AppAgents on GUI apps; devices.yaml ``os: linux-desktop``).
    LINUX_DESKTOP = "linux-desktop"
    ANDROID = "android"
    #: A phone device (devices.yaml ``os: mobile``; the reference also says android).
    MOBILE = "mobile"
    IOS = "ios"
    WEB = "web"
    API = "api"


TERMINAL_STATUSES = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})
MODIFIABLE_STATUSES = frozenset({TaskStatus.PENDING, TaskStatus.WAITING_DEPENDENCY})

E = TypeVar("E", bound=Enum)


def parse_enum(enum_cls: type[E], value: object, default: E | None = None) -> E:
    """Parse an enum member leniently: a member, its value, or its name in any letter case.

    Raises ValueError naming the accepted spellings when nothing matches and no default is given.
    """
    if isinstance(value, enum_cls):
        return value
    if value is None and default is not None:
        return default
    for member in enum_cls:
        if member.value == value:
            return member
    text = str(value).strip()
    for member in enum_cls:
        if member.name.lower() == text.lower() or str(member.value).lower() == text.lower():
            return member
    if default is not None:
        return default
    names = ", ".join(m.name for m in enum_cls)
    raise InvalidArgumentError(f"Invalid {enum_cls.__name__} {value!r}; use one of {names} (any case)")
