"""The task constellation: a DAG of TaskStars joined by typed TaskStarLines."""

from .constellation import TaskConstellation
from .enums import ConstellationState, DependencyType, DeviceType, TaskPriority, TaskStatus
from .errors import (
    ConstellationError,
    CycleError,
    DependencyNotFoundError,
    DuplicateIdError,
    InvalidTransitionError,
    ModificationError,
    TaskNotFoundError,
    UnsatisfiableDependencyError,
)
from .graph import DagIndex
from .schema import TaskConstellationSchema, TaskStarLineSchema, TaskStarSchema
from .star_line import TaskStarLine
from .task_star import TaskStar

__all__ = [
    "ConstellationError",
    "ConstellationState",
    "CycleError",
    "DagIndex",
    "DependencyNotFoundError",
    "DependencyType",
    "DeviceType",
    "DuplicateIdError",
    "InvalidTransitionError",
    "ModificationError",
    "TaskConstellation",
    "TaskConstellationSchema",
    "TaskNotFoundError",
    "TaskPriority",
    "TaskStar",
    "TaskStarLine",
    "TaskStarLineSchema",
    "TaskStarSchema",
    "TaskStatus",
    "UnsatisfiableDependencyError",
]
