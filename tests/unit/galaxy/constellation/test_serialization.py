"""JSON save/load and the lenient pydantic schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from starweave.errors import ConstellationError
from starweave.galaxy.constellation import (
    DependencyType,
    TaskConstellation,
    TaskConstellationSchema,
    TaskPriority,
    TaskStar,
    TaskStarLine,
    TaskStatus,
)


def sample() -> TaskConstellation:
    c = TaskConstellation("c1", "demo")
    c.add_task(TaskStar(task_id="a", description="first", tips=["t"], target_device_id="pc", timeout=9.0))
    c.add_task(TaskStar(task_id="b", description="second", priority=TaskPriority.HIGH))
    c.add_task(TaskStar(task_id="c", description="third"))
    c.add_dependency(TaskStarLine.create_success_only("a", "b"))
    c.add_dependency(TaskStarLine("b", "c", DependencyType.COMPLETION_ONLY, line_id="bc", metadata={"k": 1}))
    c.metadata["origin"] = "test"
    c.mark_task_completed("a", True, {"files": ["x.txt"]})
    return c


def test_json_round_trip_lossless(tmp_path: Path) -> None:
    c = sample()
    path = tmp_path / "c.json"
    text = c.to_json(path)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text)
    loaded = TaskConstellation.from_json(file_path=path)
    assert loaded.to_json() == text
    assert [t.task_id for t in loaded.get_ready_tasks()] == ["b"]
    assert loaded.get_task("c").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
    data = json.loads(text)
    assert data["tasks"]["b"]["dependencies"] == ["a"] and data["tasks"]["a"]["dependents"] == ["b"]
    assert set(data) >= {"constellation_id", "name", "state", "tasks", "dependencies", "metadata"}


def test_from_json_argument_errors() -> None:
    with pytest.raises(ConstellationError, match="exactly one of json_data or file_path"):
        TaskConstellation.from_json()
    with pytest.raises(ConstellationError, match="must be an object"):
        TaskConstellation.from_json("[]")


def test_loading_cyclic_data_is_refused() -> None:
    data = sample().to_dict()
    data["dependencies"]["back"] = {"line_id": "back", "from_task_id": "c", "to_task_id": "b"}
    with pytest.raises(ConstellationError, match="would create a cycle"):
        TaskConstellation.from_dict(data)


def test_schema_lists_generated_ids_and_case() -> None:
    schema = TaskConstellationSchema.model_validate(
        {
            "tasks": [
                {"task_id": "a", "name": "A", "description": "x", "priority": 4, "status": "completed"},
                {"name": "B", "description": "y", "priority": "high", "device_type": "Linux"},
            ],
            "dependencies": [{"from_task_id": "a", "to_task_id": "a2", "dependency_type": "success_only"}],
            "state": "executing",
        }
    )
    assert schema.constellation_id and schema.constellation_id.startswith("constellation_")
    generated = next(tid for tid in schema.tasks if tid != "a")
    assert generated.startswith("task_") and len(generated) == 13
    assert schema.tasks["a"].priority == "CRITICAL" and schema.tasks["a"].status == "COMPLETED"
    assert schema.tasks[generated].device_type == "LINUX" and schema.state == "EXECUTING"
    line = schema.get_dependencies_as_list()[0]
    assert line.line_id and line.line_id.startswith("line_") and line.dependency_type == "SUCCESS_ONLY"
    assert isinstance(schema.to_dict_with_lists()["tasks"], list)


def test_schema_duplicate_ids_rejected() -> None:
    with pytest.raises(ValidationError, match="Duplicate task id 'a'"):
        TaskConstellationSchema.model_validate({"tasks": [{"task_id": "a"}, {"task_id": "a"}]})


def test_basemodel_round_trip() -> None:
    c = sample()
    again = TaskConstellation.from_basemodel(c.to_basemodel())
    assert again.to_dict() == c.to_dict()


def test_from_llm_shaped_schema() -> None:
    schema = TaskConstellationSchema.model_validate(
        {
            "tasks": {"t1": {"name": "one", "description": "a", "tips": ["go"]}, "t2": {"description": "b"}},
            "dependencies": [{"from_task_id": "t1", "to_task_id": "t2"}],
        }
    )
    c = TaskConstellation.from_basemodel(schema)
    assert [t.task_id for t in c.get_ready_tasks()] == ["t1"]
    assert c.get_task("t2").status is TaskStatus.WAITING_DEPENDENCY  # type: ignore[union-attr]
