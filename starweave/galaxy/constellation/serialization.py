"""Dictionary and JSON forms of tasks, lines and constellations (lossless round trip).

Loading is lenient like the reference (enum names or values in any case, priority as int or
name) but, unlike it, rebuilds the readiness bookkeeping from the saved lines.
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from starweave.errors import ConstellationError

from .enums import ConstellationState, DependencyType, DeviceType, TaskPriority, TaskStatus, parse_enum
from .schema import TaskConstellationSchema
from .star_line import TaskStarLine
from .task_star import TaskStar

if TYPE_CHECKING:
    from .constellation import TaskConstellation


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _time(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if callable(value):
        return ""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if hasattr(value, "__dict__"):
        return vars(value)
    return str(value)


def to_jsonable(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` (json's C encoder walks nesting, not Python recursion)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.loads(json.dumps(value, default=_json_default, ensure_ascii=False))


# --------------------------------------------------------------------------------- tasks
def task_to_dict(
    task: TaskStar, predecessors: list[str] | None = None, successors: list[str] | None = None
) -> dict[str, Any]:
    """The reference's task dictionary; ``dependencies``/``dependents`` are neighbour task ids."""
    return {
        "task_id": task.task_id,
        "name": task.name,
        "description": task.description,
        "tips": task.tips,
        "task_description": task.description,
        "target_device_id": task.target_device_id,
        "device_type": task.device_type.value if task.device_type is not None else None,
        "priority": task.priority.value,
        "status": task.status.value,
        "result": to_jsonable(task.result),
        "error": str(task.error) if task.error is not None else None,
        "timeout": task.timeout,
        "retry_count": task.retry_count,
        "current_retry": task.current_retry,
        "task_data": to_jsonable(task.task_data),
        "expected_output_type": task.expected_output_type,
        "created_at": _iso(task.created_at),
        "updated_at": _iso(task.updated_at),
        "execution_start_time": _iso(task.execution_start_time),
        "execution_end_time": _iso(task.execution_end_time),
        "execution_duration": task.execution_duration,
        "dependencies": predecessors or [],
        "dependents": successors or [],
    }


def task_from_dict(data: dict[str, Any]) -> TaskStar:
    """Rebuild a task (status, result, error and timestamps included)."""
    device = data.get("device_type")
    task = TaskStar(
        task_id=data.get("task_id") or None,
        name=data.get("name") or "",
        description=data.get("description") or data.get("task_description") or "",
        tips=data.get("tips"),
        target_device_id=data.get("target_device_id"),
        device_type=parse_enum(DeviceType, device) if device else None,
        priority=parse_enum(TaskPriority, data.get("priority"), TaskPriority.MEDIUM),
        timeout=data.get("timeout"),
        retry_count=int(data.get("retry_count") or 0),
        task_data=data.get("task_data") or {},
        expected_output_type=data.get("expected_output_type"),
    )
    task._status = parse_enum(TaskStatus, data.get("status"), TaskStatus.PENDING)
    task._result = data.get("result")
    error = data.get("error")
    task._error = Exception(error) if error is not None else None
    task._current_retry = int(data.get("current_retry") or 0)
    task._execution_start_time = _time(data.get("execution_start_time"))
    task._execution_end_time = _time(data.get("execution_end_time"))
    task.created_at = _time(data.get("created_at")) or task.created_at
    task.updated_at = _time(data.get("updated_at")) or task.updated_at
    return task


# --------------------------------------------------------------------------------- lines
def line_to_dict(line: TaskStarLine) -> dict[str, Any]:
    """The reference's line dictionary (the evaluator is not serializable and is left out)."""
    return {
        "line_id": line.line_id,
        "from_task_id": line.from_task_id,
        "to_task_id": line.to_task_id,
        "dependency_type": line.dependency_type.value,
        "condition_description": line.condition_description,
        "metadata": to_jsonable(line.metadata),
        "is_satisfied": line.is_satisfied(),
        "last_evaluation_result": line.last_evaluation_result,
        "last_evaluation_time": _iso(line.last_evaluation_time),
        "created_at": _iso(line.created_at),
        "updated_at": _iso(line.updated_at),
    }


def line_from_dict(data: dict[str, Any]) -> TaskStarLine:
    """Rebuild a line with its recorded satisfaction state."""
    line = TaskStarLine(
        from_task_id=data["from_task_id"],
        to_task_id=data["to_task_id"],
        dependency_type=parse_enum(DependencyType, data.get("dependency_type"), DependencyType.UNCONDITIONAL),
        condition_description=data.get("condition_description"),
        line_id=data.get("line_id") or None,
        metadata=data.get("metadata") or {},
    )
    line._is_satisfied = bool(data.get("is_satisfied", False))
    line.last_evaluation_result = data.get("last_evaluation_result")
    line.last_evaluation_time = _time(data.get("last_evaluation_time"))
    line.created_at = _time(data.get("created_at")) or line.created_at
    line.updated_at = _time(data.get("updated_at")) or line.updated_at
    return line


# --------------------------------------------------------------------------------- constellations
def constellation_to_dict(c: TaskConstellation) -> dict[str, Any]:
    """The reference's constellation dictionary."""
    dag = c.dag
    tasks = {}
    for task in c.get_all_tasks():
        preds = sorted(set(dag.in_lines(task.task_id).values()))
        succs = sorted(set(dag.out_lines(task.task_id).values()))
        tasks[task.task_id] = task_to_dict(task, preds, succs)
    return {
        "constellation_id": c.constellation_id,
        "name": c.name,
        "state": c.state.value,
        "tasks": tasks,
        "dependencies": {line.line_id: line_to_dict(line) for line in c.get_all_dependencies()},
        "metadata": to_jsonable(c.metadata),
        "created_at": _iso(c.created_at),
        "updated_at": _iso(c.updated_at),
        "execution_start_time": _iso(c.execution_start_time),
        "execution_end_time": _iso(c.execution_end_time),
        "execution_duration": c.execution_duration,
    }


def _items(value: Any, key: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, dict):
        return [dict(item, **{key: item.get(key) or k}) for k, item in value.items()]
    return list(value)


def constellation_from_dict(data: dict[str, Any]) -> TaskConstellation:
    """Rebuild a constellation; tasks and lines may be given as dicts (by id) or lists."""
    from .constellation import TaskConstellation

    c = TaskConstellation(data.get("constellation_id") or None, data.get("name") or None)
    c.add_tasks(task_from_dict(item) for item in _items(data.get("tasks"), "task_id"))
    c.restore_dependencies(line_from_dict(item) for item in _items(data.get("dependencies"), "line_id"))
    c.metadata = dict(data.get("metadata") or {})
    c.execution_start_time = _time(data.get("execution_start_time"))
    c.execution_end_time = _time(data.get("execution_end_time"))
    c.update_state()
    if data.get("state"):
        c.state = parse_enum(ConstellationState, data["state"], c.state)
    c.created_at = _time(data.get("created_at")) or c.created_at
    c.updated_at = _time(data.get("updated_at")) or c.updated_at
    return c


def constellation_to_json(c: TaskConstellation, save_path: str | Path | None = None) -> str:
    """JSON text (indent 2, UTF-8); also written to ``save_path`` when given."""
    text = json.dumps(constellation_to_dict(c), indent=2, ensure_ascii=False, default=_json_default)
    if save_path is not None:
        Path(save_path).write_text(text, encoding="utf-8")
    return text


def constellation_from_json(
    json_data: str | None = None, file_path: str | Path | None = None
) -> TaskConstellation:
    """Load from a JSON string or a file (exactly one of them)."""
    if (json_data is None) == (file_path is None):
        raise ConstellationError("Give exactly one of json_data or file_path to load a constellation")
    text = (
        json_data
        if json_data is not None
        else Path(cast("str | Path", file_path)).read_text(encoding="utf-8")
    )
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ConstellationError("Constellation JSON must be an object with 'tasks' and 'dependencies'")
    return constellation_from_dict(data)


class ConstellationSerialization:
    """Mixin: the reference's serialization methods on TaskConstellation."""

    def _me(self) -> TaskConstellation:
        return cast("TaskConstellation", self)

    def to_dict(self) -> dict[str, Any]:
        """See :func:`constellation_to_dict`."""
        return constellation_to_dict(self._me())

    def to_json(self, save_path: str | Path | None = None) -> str:
        """See :func:`constellation_to_json`."""
        return constellation_to_json(self._me(), save_path)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskConstellation:
        """See :func:`constellation_from_dict`."""
        return constellation_from_dict(data)

    @classmethod
    def from_json(
        cls, json_data: str | None = None, file_path: str | Path | None = None
    ) -> TaskConstellation:
        """See :func:`constellation_from_json`."""
        return constellation_from_json(json_data, file_path)

    def to_basemodel(self) -> TaskConstellationSchema:
        """The pydantic schema of this constellation."""
        return TaskConstellationSchema.model_validate(self.to_dict())

    @classmethod
    def from_basemodel(cls, schema: TaskConstellationSchema) -> TaskConstellation:
        """Build from a (lenient) pydantic schema."""
        return constellation_from_dict(schema.model_dump())
