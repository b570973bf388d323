"""Pydantic wire schemas (LLM- and MCP-facing) with the reference's leniency.

Tasks and dependencies may arrive as lists or as dicts keyed by id; missing ids are generated
(``task_<hex8>``, ``line_<hex8>``, ``constellation_<hex8>_<YYYYmmdd_HHMMSS>``); priority may be an
int or a name and status/device_type/dependency_type any letter case.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from .enums import DeviceType
from .task_star import utc_now

_PRIORITY_NAMES = {1: "LOW", 2: "MEDIUM", 3: "HIGH", 4: "CRITICAL"}
DEVICE_TYPE_ALIASES = {"darwin": DeviceType.MACOS.value}
"""Device kind names (``starweave.device_kinds``) that are not DeviceType values."""
DEVICE_TYPES = [m.value for m in DeviceType]
"""The ``device_type`` values a task may state (any case)."""


def generate_task_id() -> str:
    """A fresh global task id ``task_<hex8>``."""
    return f"task_{uuid.uuid4().hex[:8]}"


def generate_line_id() -> str:
    """A fresh line id ``line_<hex8>``."""
    return f"line_{uuid.uuid4().hex[:8]}"


def generate_constellation_id() -> str:
    """A fresh id ``constellation_<hex8>_<YYYYmmdd_HHMMSS>``."""
    return f"constellation_{uuid.uuid4().hex[:8]}_{utc_now().strftime('%Y%m%d_%H%M%S')}"


def _upper(value: Any) -> Any:
    if value is None:
        return None
    raw = getattr(value, "value", value)
    return str(raw).upper()


class TaskStarSchema(BaseModel):
    """One task as exchanged with the LLM / MCP tools."""

    task_id: str | None = None
    name: str = ""
    description: str = ""
    tips: list[str] | None = None
    target_device_id: str | None = None
    device_type: str | None = None
    priority: Any = "MEDIUM"
    status: Any = "PENDING"
    result: Any = None
    error: str | None = None
    timeout: float | None = None
    retry_count: int = 0
    current_retry: int = 0
    task_data: dict[str, Any] = Field(default_factory=dict)
    expected_output_type: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    execution_start_time: str | None = None
    execution_end_time: str | None = None
    execution_duration: float | None = None
    dependencies: list[str] = Field(default_factory=list)
    dependents: list[str] = Field(default_factory=list)

    @field_validator("task_id", mode="after")
    @classmethod
    def _generate_id(cls, value: str | None) -> str:
        return value or generate_task_id()

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, value: Any) -> str:
        raw = getattr(value, "value", value)
        if isinstance(raw, int) and not isinstance(raw, bool):
            return _PRIORITY_NAMES.get(raw, "MEDIUM")
        text = str(raw).strip().upper()
        if text.isdigit():
            return _PRIORITY_NAMES.get(int(text), "MEDIUM")
        return text if text in _PRIORITY_NAMES.values() else "MEDIUM"

    @model_validator(mode="before")
    @classmethod
    def _capabilities_into_task_data(cls, data: Any) -> Any:
        """A planner's top-level ``required_capabilities`` (a word or a list of words) is kept in
        ``task_data``, where device assignment reads it."""
        if not isinstance(data, dict) or "required_capabilities" not in data:
            return data
        data = dict(data)
        wanted = data.pop("required_capabilities")
        if wanted is None:
            return data
        words = [wanted] if isinstance(wanted, str) else wanted
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
            raise ValueError(
                f'required_capabilities: expected a list of capability words (e.g. ["gui"]), got {wanted!r}'
            )
        task_data = data.get("task_data")
        data["task_data"] = {
            **(task_data if isinstance(task_data, dict) else {}),
            "required_capabilities": [w.strip().lower() for w in words],
        }
        return data

    @field_validator("status", mode="before")
    @classmethod
    def _upper_enum(cls, value: Any) -> Any:
        return _upper(value)

    @field_validator("device_type", mode="before")
    @classmethod
    def _device_type(cls, value: Any) -> Any:
        """A DeviceType in any case (``darwin``, the device kind's name, is the reference's macos);
        anything else is refused naming the accepted values."""
        if value is None or value == "":
            return None
        text = str(getattr(value, "value", value)).strip().lower()
        text = DEVICE_TYPE_ALIASES.get(text, text)
        for member in DeviceType:
            if text in (member.value, member.name.lower()):
                return member.value.upper()
        raise ValueError(f"unknown device_type {value!r}; use one of {', '.join(DEVICE_TYPES)}")


class TaskStarLineSchema(BaseModel):
    """One dependency line as exchanged with the LLM / MCP tools."""

    line_id: str | None = None
    from_task_id: str
    to_task_id: str
    dependency_type: Any = "UNCONDITIONAL"
    condition_description: str | None = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    is_satisfied: bool = False
    last_evaluation_result: bool | None = None
    last_evaluation_time: str | None = None
    created_at: str | None = None
    updated_at: str | None = None

    @field_validator("line_id", mode="after")
    @classmethod
    def _generate_id(cls, value: str | None) -> str:
        return value or generate_line_id()

    @field_validator("dependency_type", mode="before")
    @classmethod
    def _upper_enum(cls, value: Any) -> Any:
        return _upper(value) or "UNCONDITIONAL"


class TaskConstellationSchema(BaseModel):
    """A whole constellation; ``tasks``/``dependencies`` are normalised to dicts keyed by id."""

    constellation_id: str | None = None
    name: str | None = None
    state: Any = "CREATED"
    tasks: dict[str, TaskStarSchema] = Field(default_factory=dict)
    dependencies: dict[str, TaskStarLineSchema] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    execution_start_time: str | None = None
    execution_end_time: str | None = None
    execution_duration: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if not data.get("constellation_id"):
            data["constellation_id"] = generate_constellation_id()
        data["tasks"] = cls._keyed(data.get("tasks"), "task_id", generate_task_id, "task")
        data["dependencies"] = cls._keyed(data.get("dependencies"), "line_id", generate_line_id, "dependency")
        return data

    @staticmethod
    def _keyed(value: Any, key: str, make_id: Any, what: str) -> dict[str, Any]:
        if value is None:
            return {}
        items: list[tuple[str | None, Any]]
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = [(None, item) for item in value]
        else:
            raise ValueError(f"'{what}' entries must be a list or an object keyed by id")
        entries = [
            (dict_key, item.model_dump() if isinstance(item, BaseModel) else dict(item))
            for dict_key, item in items
        ]
        # Generated ids must not collide with given ones (32-bit ids do collide in large graphs).
        taken = {entry.get(key) or dict_key for dict_key, entry in entries} - {None}
        out: dict[str, Any] = {}
        for dict_key, entry in entries:
            ident = entry.get(key) or dict_key
            if not ident:
                ident = make_id()
                while ident in taken:
                    ident = make_id()
                taken.add(ident)
            entry[key] = ident
            if ident in out:
                raise ValueError(f"Duplicate {what} id {ident!r}; every {what} needs a unique {key}")
            out[ident] = entry
        return out

    @field_validator("state", mode="before")
    @classmethod
    def _upper_state(cls, value: Any) -> Any:
        return _upper(value) or "CREATED"

    def get_tasks_as_list(self) -> list[TaskStarSchema]:
        """Tasks in insertion order."""
        return list(self.tasks.values())

    def get_dependencies_as_list(self) -> list[TaskStarLineSchema]:
        """Dependencies in insertion order."""
        return list(self.dependencies.values())

    def to_dict_with_lists(self) -> dict[str, Any]:
        """``model_dump()`` with tasks and dependencies as lists (the LLM-facing form)."""
        data = self.model_dump()
        data["tasks"] = list(data["tasks"].values())
        data["dependencies"] = list(data["dependencies"].values())
        return data
