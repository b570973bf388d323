"""Galaxy orchestration: run a TaskConstellation across devices, merge the agent's edits as it runs.

Public names: TaskConstellationOrchestrator, ConstellationManager, ConstellationModificationSynchronizer,
DeviceExecutor, build_task_request, merge_constellation_states.
"""

from .assignment import STRATEGIES, ConstellationManager
from .executor import DeviceExecutor
from .merge import merge_constellation_states
from .orchestrator import TaskConstellationOrchestrator
from .requests import RESULTS_HEADER, build_task_request, device_answer
from .synchronizer import SYNC_EVENT_TYPES, ConstellationModificationSynchronizer

__all__ = [
    "RESULTS_HEADER",
    "STRATEGIES",
    "SYNC_EVENT_TYPES",
    "ConstellationManager",
    "ConstellationModificationSynchronizer",
    "DeviceExecutor",
    "TaskConstellationOrchestrator",
    "build_task_request",
    "device_answer",
    "merge_constellation_states",
]
