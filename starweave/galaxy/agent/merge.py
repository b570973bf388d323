"""Constellation helpers of the ConstellationAgent: copy execution state over an edit, and diff two DAGs."""

from __future__ import annotations

from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStatus

# How far a task has got; terminal statuses rank equal and never override each other.
_RANK = {
    TaskStatus.PENDING.value: 0,
    TaskStatus.WAITING_DEPENDENCY.value: 1,
    TaskStatus.RUNNING.value: 2,
    TaskStatus.COMPLETED.value: 3,
    TaskStatus.FAILED.value: 3,
    TaskStatus.CANCELLED.value: 3,
}
_TASK_STATE_KEYS = (
    "status",
    "result",
    "error",
    "execution_start_time",
    "execution_end_time",
    "execution_duration",
)
_LINE_STATE_KEYS = ("is_satisfied", "last_evaluation_result", "last_evaluation_time")
_EDITABLE_TASK_KEYS = ("name", "description", "tips", "target_device_id")


def carry_execution_state(before: TaskConstellation, after: TaskConstellation) -> TaskConstellation:
    """A copy of ``after`` (the edited structure) with ``before``'s execution state where more advanced.

    ``before`` is the merged state the edit started from; the MCP server's copy may lag behind it (it
    is synced before each edit, and a failed sync leaves the previous state there). The copy keeps
    ``before``'s id, name and start time so the orchestrator recognises it.
    """
    old, new = before.to_dict(), after.to_dict()
    for task_id, task in new["tasks"].items():
        prior = old["tasks"].get(task_id)
        if prior is not None and _RANK.get(prior["status"], 0) > _RANK.get(task["status"], 0):
            for key in _TASK_STATE_KEYS:
                task[key] = prior.get(key)
    for line_id, line in new["dependencies"].items():
        prior = old["dependencies"].get(line_id)
        if prior is not None and prior.get("is_satisfied") and not line.get("is_satisfied"):
            for key in _LINE_STATE_KEYS:
                line[key] = prior.get(key)
    new["constellation_id"] = old["constellation_id"]
    new["name"] = old["name"]
    new["execution_start_time"] = old["execution_start_time"]
    new["metadata"] = {**old.get("metadata", {}), **new.get("metadata", {})}
    new["state"] = None  # derive it from the task statuses
    return TaskConstellation.from_dict(new)


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


def runnable_left(constellation: TaskConstellation) -> bool:
    """True when some task has not ended yet (so an orchestration has work to do)."""
    return not constellation.is_complete()


def all_succeeded(constellation: TaskConstellation) -> bool:
    """True when every task completed successfully."""
    return all(t.status is TaskStatus.COMPLETED for t in constellation.get_all_tasks())
