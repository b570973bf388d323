"""TaskStar: defaults, lifecycle, guarded setters, validation, request string."""

from __future__ import annotations

import pytest

from starweave.errors import ConstellationError, InvalidTransitionError, ModificationError
from starweave.galaxy.constellation import TaskPriority, TaskStar, TaskStatus


def test_defaults() -> None:
    task = TaskStar(description="d")
    assert len(task.task_id) == 36
    assert task.name == f"task_{task.task_id[:8]}"
    assert task.priority is TaskPriority.MEDIUM
    assert task.status is TaskStatus.PENDING
    assert task.task_description == "d"
    assert task.is_ready_to_execute


def test_request_string_exact() -> None:
    task = TaskStar(description="Open the file", tips=["use vim", "save it"])
    assert (
        task.to_request_string()
        == "Task Description: Open the file\nTips for Completion:\n - use vim\n - save it"
    )
    assert TaskStar(description="x").to_request_string() == (
        "Task Description: x\nTips for Completion:\nNo tips available."
    )


def test_lifecycle_and_errors() -> None:
    task = TaskStar(description="d", retry_count=1)
    with pytest.raises(InvalidTransitionError, match="Cannot complete task in status PENDING"):
        task.complete_with_success(1)
    task.start_execution()
    with pytest.raises(ValueError, match="Cannot start task in status RUNNING"):
        task.start_execution()
    task.complete_with_failure("boom")
    assert task.status is TaskStatus.FAILED and str(task.error) == "boom"
    assert task.execution_duration is not None and task.execution_duration >= 0
    assert task.should_retry()
    task.retry()
    assert task.status is TaskStatus.PENDING and task.error is None and task.current_retry == 1
    task.start_execution()
    task.complete_with_failure(RuntimeError("again"))
    assert not task.should_retry()
    with pytest.raises(InvalidTransitionError, match="retries used 1 of 1"):
        task.retry()


def test_cancel() -> None:
    task = TaskStar(description="d")
    task.cancel()
    assert task.is_terminal
    with pytest.raises(InvalidTransitionError, match="Cannot cancel task in status CANCELLED"):
        task.cancel()


@pytest.mark.parametrize("field", ["name", "description", "target_device_id", "priority", "tips"])
def test_setters_refused_once_running_or_terminal(field: str) -> None:
    task = TaskStar(description="d")
    value = TaskPriority.HIGH if field == "priority" else ["t"] if field == "tips" else "v"
    setattr(task, field, value)  # allowed while pending
    task.start_execution()
    with pytest.raises(ModificationError, match=f"of running task {task.task_id}"):
        setattr(task, field, value)
    task.complete_with_success("ok")
    with pytest.raises(ConstellationError, match="of completed task"):
        setattr(task, field, value)


def test_device_assignment_message_i1() -> None:
    task = TaskStar(description="d", target_device_id="pc")
    task.start_execution()
    with pytest.raises(ModificationError, match="Cannot modify device assignment of running task"):
        task.target_device_id = "other"
    with pytest.raises(ModificationError, match="task data"):
        task.update_task_data({"a": 1})


def test_validation_errors() -> None:
    task = TaskStar(task_id="", name="", description="", timeout=-1)
    task._name = ""
    assert task.get_validation_errors() == [
        "Task ID must be a non-empty string",
        "Task name must be a non-empty string",
        "Task description must be a non-empty string",
        "Timeout must be a positive number",
    ]
    assert not task.validate()
    assert TaskStar(description="ok", timeout=5).validate()


def test_dict_round_trip() -> None:
    task = TaskStar(task_id="a", description="d", tips=["x"], priority=TaskPriority.HIGH, timeout=3.5)
    task.start_execution()
    task.complete_with_success({"k": [1, 2]})
    again = TaskStar.from_dict(task.to_dict())
    assert again.to_dict() == task.to_dict()
    assert TaskStar.from_dict({"description": "x", "priority": "critical", "status": "RUNNING"}).priority is (
        TaskPriority.CRITICAL
    )
