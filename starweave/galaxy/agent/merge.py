"""Constellation helpers of the ConstellationAgent: diff two DAGs, and how far a run has got."""

from __future__ import annotations

from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStatus

_EDITABLE_TASK_KEYS = ("name", "description", "tips", "target_device_id")


def diff_constellations(before: TaskConstellation | None, after: TaskConstellation) -> dict[str, Any]:
    """What an edit changed: added/removed/modified task ids and added/removed dependency ids."""
    old_tasks = before.tasks if before is not None else {}
    new_tasks = after.tasks
    old_lines = before.dependencies if before is not None else {}
    new_lines = after.dependencies
    modified = [
        task_id
        for task_id, task in new_tasks.items()
        if task_id in old_tasks
        and any(getattr(task, key) != getattr(old_tasks[task_id], key) for key in _EDITABLE_TASK_KEYS)
    ]
    return {
        "added_tasks": [t for t in new_tasks if t not in old_tasks],
        "removed_tasks": [t for t in old_tasks if t not in new_tasks],
        "modified_tasks": modified,
        "added_dependencies": [d for d in new_lines if d not in old_lines],
        "removed_dependencies": [d for d in old_lines if d not in new_lines],
    }


def all_succeeded(constellation: TaskConstellation) -> bool:
    """True when every task completed successfully."""
    return all(t.status is TaskStatus.COMPLETED for t in constellation.get_all_tasks())
