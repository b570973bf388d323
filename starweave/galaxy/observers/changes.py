"""Structural diff of two constellations (the reference's VisualizationChangeDetector, spec E §14).

Both sides may be TaskConstellation objects or their ``to_dict()`` form (as stored in logs), so
the same detector serves the live metrics observer and the offline reports.

Fixes a reference bug: its dependency-property check read attributes that do not exist, so a
changed dependency was never reported. Here a dependency (keyed ``"from->to"``) is modified when
its type, condition description or metadata differ.
"""

from __future__ import annotations

from typing import Any, Protocol, TypedDict

TASK_FIELDS = (
    "name",
    "description",
    "status",
    "priority",
    "target_device_id",
    "timeout",
    "retry_count",
    "tips",
    "task_data",
)
DEPENDENCY_FIELDS = ("dependency_type", "condition_description", "metadata")


class _Dictable(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


class ConstellationChanges(TypedDict):
    """What changed between two constellations."""

    modification_type: str
    added_tasks: list[str]
    removed_tasks: list[str]
    modified_tasks: list[str]
    added_dependencies: list[str]
    removed_dependencies: list[str]
    modified_dependencies: list[str]


def _as_dict(constellation: _Dictable | dict[str, Any]) -> dict[str, Any]:
    if isinstance(constellation, dict):
        return constellation
    return constellation.to_dict()


def _items(value: Any, key: str) -> list[dict[str, Any]]:
    """Tasks or lines given as ``{id: item}`` or as a list of items (anything else: none)."""
    if isinstance(value, dict):
        return [
            dict(item, **{key: item.get(key) or k}) for k, item in value.items() if isinstance(item, dict)
        ]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def _task_snapshot(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in _items(data.get("tasks"), "task_id"):
        fields = {name: item.get(name) for name in TASK_FIELDS}
        fields["tips"] = list(fields["tips"] or [])
        fields["task_data"] = fields["task_data"] or {}
        out[str(item.get("task_id"))] = fields
    return out


def _dependency_snapshot(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in _items(data.get("dependencies"), "line_id"):
        key = f"{item.get('from_task_id')}->{item.get('to_task_id')}"
        fields = {name: item.get(name) for name in DEPENDENCY_FIELDS}
        fields["metadata"] = fields["metadata"] or {}
        out[key] = fields
    return out


def _modification_type(changes: ConstellationChanges) -> str:
    # Precedence as in the reference.
    if changes["added_tasks"] and changes["removed_tasks"]:
        return "tasks_added_and_removed"
    if changes["added_tasks"]:
        return "tasks_added"
    if changes["removed_tasks"]:
        return "tasks_removed"
    if changes["added_dependencies"] and changes["removed_dependencies"]:
        return "dependencies_modified"
    if changes["added_dependencies"]:
        return "dependencies_added"
    if changes["removed_dependencies"]:
        return "dependencies_removed"
    if changes["modified_dependencies"]:
        return "dependency_properties_updated"
    if changes["modified_tasks"]:
        return "task_properties_updated"
    return "constellation_updated"


def calculate_constellation_changes(
    old: _Dictable | dict[str, Any] | None, new: _Dictable | dict[str, Any]
) -> ConstellationChanges:
    """Tasks and dependencies added, removed and modified from ``old`` to ``new``.

    ``old=None`` means the constellation was just created: everything in ``new`` is added and the
    type is ``"constellation_created"``.
    """
    new_data = _as_dict(new)
    new_tasks, new_deps = _task_snapshot(new_data), _dependency_snapshot(new_data)
    if old is None:
        return ConstellationChanges(
            modification_type="constellation_created",
            added_tasks=list(new_tasks),
            removed_tasks=[],
            modified_tasks=[],
            added_dependencies=list(new_deps),
            removed_dependencies=[],
            modified_dependencies=[],
        )
    old_data = _as_dict(old)
    old_tasks, old_deps = _task_snapshot(old_data), _dependency_snapshot(old_data)
    changes = ConstellationChanges(
        modification_type="",
        added_tasks=[t for t in new_tasks if t not in old_tasks],
        removed_tasks=[t for t in old_tasks if t not in new_tasks],
        modified_tasks=[t for t, fields in new_tasks.items() if t in old_tasks and old_tasks[t] != fields],
        added_dependencies=[d for d in new_deps if d not in old_deps],
        removed_dependencies=[d for d in old_deps if d not in new_deps],
        modified_dependencies=[
            d for d, fields in new_deps.items() if d in old_deps and old_deps[d] != fields
        ],
    )
    changes["modification_type"] = _modification_type(changes)
    return changes


def format_change_summary(changes: ConstellationChanges | dict[str, Any]) -> str:
    """One line such as ``tasks_added: +2 tasks, ~1 task, +1 dependency``."""
    parts = []
    for key, sign, noun in (
        ("added_tasks", "+", "task"),
        ("removed_tasks", "-", "task"),
        ("modified_tasks", "~", "task"),
        ("added_dependencies", "+", "dependency"),
        ("removed_dependencies", "-", "dependency"),
        ("modified_dependencies", "~", "dependency"),
    ):
        value: Any = changes.get(key) or []
        count = len(value)
        if count:
            plural = noun if count == 1 else ("dependencies" if noun == "dependency" else "tasks")
            parts.append(f"{sign}{count} {plural}")
    kind = str(changes.get("modification_type", "unknown"))
    return f"{kind}: {', '.join(parts)}" if parts else kind
