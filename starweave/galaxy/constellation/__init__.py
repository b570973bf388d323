"""The task constellation: a DAG of TaskStars joined by typed TaskStarLines."""

from .commands import snapshot
from .constellation import TaskConstellation
from .display import DISPLAY_MODES, display_dag, render_constellation
from .editor import ConstellationEditor
from .enums import ConstellationState, DependencyType, DeviceType, TaskPriority, TaskStatus
from .render import to_dot, to_mermaid, to_prompt_text, to_rich_tree
from .schema import TaskConstellationSchema, TaskStarLineSchema, TaskStarSchema
from .star_line import TaskStarLine
from .task_config import TaskConfiguration
from .task_star import TaskStar

__all__ = [
    "DISPLAY_MODES",
    "ConstellationEditor",
    "ConstellationState",
    "DependencyType",
    "DeviceType",
    "TaskConfiguration",
    "TaskConstellation",
    "TaskConstellationSchema",
    "TaskPriority",
    "TaskStar",
    "TaskStarLine",
    "TaskStarLineSchema",
    "TaskStarSchema",
    "TaskStatus",
    "display_dag",
    "render_constellation",
    "snapshot",
    "to_dot",
    "to_mermaid",
    "to_prompt_text",
    "to_rich_tree",
]
