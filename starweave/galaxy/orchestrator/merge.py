"""The reference's merge rule: the agent's edited constellation supplies the structure, the
orchestrator's copy supplies execution state wherever it is further along (spec B §6.5).

Built on the constellation's public ``to_dict``/``from_dict`` round trip, which rebuilds the
readiness bookkeeping; line satisfaction is recomputed from the merged statuses so a task whose
prerequisites ended while the agent was editing becomes ready (or is cancelled when its line can
no longer be satisfied) instead of waiting forever.
"""

from __future__ import annotations

from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStatus
from starweave.galaxy.constellation.enums import TERMINAL_STATUSES, parse_enum
from starweave.galaxy.types import ExecutionResult

_LEVELS = {
    TaskStatus.PENDING: 0,
    TaskStatus.WAITING_DEPENDENCY: 1,
    TaskStatus.RUNNING: 2,
    TaskStatus.COMPLETED: 3,
    TaskStatus.FAILED: 3,
    TaskStatus.CANCELLED: 3,
}


def state_level(status: TaskStatus | str | None) -> int:
    """PENDING 0 < WAITING_DEPENDENCY 1 < RUNNING 2 < any terminal 3; unknown 0."""
    try:
        return _LEVELS.get(parse_enum(TaskStatus, status), 0)
    except ValueError:
        return 0


def is_state_more_advanced(orchestrator_status: TaskStatus | str, agent_status: TaskStatus | str) -> bool:
    """True when the orchestrator's status is strictly further along (terminal states rank equal)."""
    return state_level(orchestrator_status) > state_level(agent_status)


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _jsonable_result(result: Any) -> Any:
    if isinstance(result, ExecutionResult):
        return result.to_dict()
    return result


def merge_constellation_states(
    agent_copy: TaskConstellation, orchestrator_copy: TaskConstellation
) -> TaskConstellation:
    """A new constellation: ``agent_copy``'s tasks and lines with the orchestrator's more advanced
    execution state (status, result, error, start/end times). Tasks the agent removed are gone."""
    if agent_copy is orchestrator_copy:
        return orchestrator_copy
    data = agent_copy.to_dict()
    results: dict[str, Any] = {}
    statuses: dict[str, TaskStatus] = {}
    for task_id, item in data["tasks"].items():
        status = parse_enum(TaskStatus, item.get("status"), TaskStatus.PENDING)
        ours = orchestrator_copy.get_task(task_id)
        if ours is not None and is_state_more_advanced(ours.status, status):
            status = ours.status
            item["status"] = status.value
            item["result"] = _jsonable_result(ours.result)
            item["error"] = str(ours.error) if ours.error is not None else None
            item["execution_start_time"] = _iso(ours.execution_start_time)
            item["execution_end_time"] = _iso(ours.execution_end_time)
            results[task_id] = ours.result
        else:
            agent_task = agent_copy.get_task(task_id)
            results[task_id] = agent_task.result if agent_task is not None else item.get("result")
        statuses[task_id] = status
    doomed: list[str] = []
    for line_id, item in data["dependencies"].items():
        source = item["from_task_id"]
        source_status = statuses.get(source)
        line = agent_copy.get_dependency(line_id)
        if source_status is None or line is None or source_status not in TERMINAL_STATUSES:
            item["is_satisfied"] = False
            continue
        satisfied = line.outcome_satisfies(source_status, results.get(source))
        item["is_satisfied"] = satisfied
        if not satisfied:
            doomed.append(item["to_task_id"])
    if orchestrator_copy.execution_start_time is not None:
        data["execution_start_time"] = _iso(orchestrator_copy.execution_start_time)
    merged = TaskConstellation.from_dict(data)
    for task_id in doomed:
        task = merged.get_task(task_id)
        if task is not None and not task.is_terminal:
            merged.cancel_task(task_id)  # its prerequisite ended the wrong way; dependents follow
    merged.update_state()
    return merged
