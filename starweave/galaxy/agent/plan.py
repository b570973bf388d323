"""A creation answer made whole, and checked for plans a device cannot carry out.

The small model is asked only for what it must decide (task ids, devices, descriptions, optional
tips, dependencies as from/to pairs); :func:`complete_plan` fills in the rest: task names from the
descriptions, short line ids (``l1``, ``l2``...) and condition descriptions. Answers in the
reference's full shape pass through unchanged.

:func:`plan_faults` finds what makes a plan impossible to build or run on the devices (unknown
tasks, cycles, unknown devices, a task on a device without the ``device_type`` or
``required_capabilities`` the task states): the agent asks again, and fails after the last attempt.
The checks for plans that are only likely wrong on a fleet of separate machines are guards
(``plan_guards``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from typing import Any

from starweave.galaxy.constellation import TaskConstellationSchema
from starweave.galaxy.constellation.enums import DependencyType
from starweave.galaxy.constellation.task_star import short_name
from starweave.galaxy.orchestrator.assignment import REQUIRED_CAPABILITIES, missing_requirements

NAME_CHARS = 60
"""Longest task name made from a description."""


@dataclass(frozen=True)
class PlanProblem:
    """One thing wrong with a plan; ``fatal`` when the plan cannot be built at all."""

    text: str
    fatal: bool = False


def task_name(description: str) -> str:
    """A short task name from its description (see ``short_name``)."""
    return short_name(description, NAME_CHARS)


def _free_id(prefix: str, taken: set[str]) -> str:
    number = 1
    while f"{prefix}{number}" in taken:
        number += 1
    return f"{prefix}{number}"


def complete_plan(plan: TaskConstellationSchema) -> TaskConstellationSchema:
    """``plan`` with the fields the model need not write: names, short line ids, conditions.

    Line ids the schema generated (``line_<hex>``: the answer had none) become ``l1``, ``l2``...;
    ids the model wrote are kept. A line without a ``dependency_type`` is SUCCESS_ONLY: the prompt
    says the later task receives the earlier one's result, so after a failure it has nothing to work
    on (the constellation cancels it instead of running it on missing data).
    """
    data = plan.model_dump()
    for key, given in plan.dependencies.items():
        if "dependency_type" not in given.model_fields_set:
            data["dependencies"][key]["dependency_type"] = DependencyType.SUCCESS_ONLY.name
    for task in data["tasks"].values():
        if not str(task.get("name") or "").strip():
            task["name"] = task_name(str(task.get("description") or task["task_id"]))
        task["tips"] = [t for t in task.get("tips") or [] if str(t).strip()] or None
    taken = {key for key in data["dependencies"] if not key.startswith("line_")}
    lines = {}
    for key, line in data["dependencies"].items():
        if key.startswith("line_"):
            key = _free_id("l", taken)
            taken.add(key)
            line["line_id"] = key
        if not str(line.get("condition_description") or "").strip():
            ended = "succeeded" if line["dependency_type"] == DependencyType.SUCCESS_ONLY.name else "finished"
            line["condition_description"] = f"{line['from_task_id']} {ended}"
        lines[key] = line
    data["dependencies"] = lines
    return TaskConstellationSchema.model_validate(data)


def _structure_problems(plan: TaskConstellationSchema, device_ids: set[str] | None) -> list[PlanProblem]:
    problems: list[PlanProblem] = []
    if not plan.tasks:
        problems.append(PlanProblem("the plan has no tasks", fatal=True))
    for task in plan.tasks.values():
        if not task.description.strip():
            problems.append(PlanProblem(f"task {task.task_id} has no description", fatal=True))
        if device_ids is not None and task.target_device_id not in device_ids:
            known = ", ".join(sorted(device_ids))
            problems.append(
                PlanProblem(
                    f"task {task.task_id} is on {task.target_device_id!r}, which is not an available "
                    f"device (use one of: {known})",
                    fatal=True,
                )
            )
    graph: dict[str, set[str]] = {task_id: set() for task_id in plan.tasks}
    for line in plan.dependencies.values():
        missing = [t for t in (line.from_task_id, line.to_task_id) if t not in plan.tasks]
        if missing:
            problems.append(
                PlanProblem(
                    f"dependency {line.from_task_id} -> {line.to_task_id} names no task "
                    f"{', '.join(missing)} (tasks: {', '.join(plan.tasks)})",
                    fatal=True,
                )
            )
        elif line.from_task_id == line.to_task_id:
            problems.append(PlanProblem(f"task {line.from_task_id} depends on itself", fatal=True))
        else:
            graph[line.to_task_id].add(line.from_task_id)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        cycle = " -> ".join(str(node) for node in exc.args[1])
        problems.append(PlanProblem(f"the dependencies form a cycle ({cycle})", fatal=True))
    return problems


def _requirement_problems(
    plan: TaskConstellationSchema, devices: Sequence[Mapping[str, Any]]
) -> list[PlanProblem]:
    """A task on a device that lacks the kind or capabilities the task states (fatal: it would
    fail there, or do the wrong thing), naming the devices that fit, or saying none does."""
    # Device lines carry "os" (the prompt's word) and, from AgentProfile, "device_type".
    by_id = {
        str(d.get("device_id")): {**d, "device_type": d.get("device_type") or d.get("os")} for d in devices
    }
    problems = []
    for task in plan.tasks.values():
        kind = task.device_type.lower() if task.device_type else None
        needs = list(task.task_data.get(REQUIRED_CAPABILITIES) or [])
        device = by_id.get(str(task.target_device_id))
        if (kind is None and not needs) or device is None:
            continue
        missing = missing_requirements(kind, needs, device)
        if not missing:
            continue
        fitting = [i for i, d in by_id.items() if not missing_requirements(kind, needs, d)]
        where = (
            f"put it on {' or '.join(fitting)}"
            if fitting
            else "no device has that: drop the requirement if the task can do without it, or answer FAIL"
        )
        problems.append(
            PlanProblem(
                f"task {task.task_id} needs {' and '.join(missing)}, which {task.target_device_id} "
                f"lacks; {where}",
                fatal=True,
            )
        )
    return problems


def plan_faults(
    plan: TaskConstellationSchema,
    device_ids: list[str] | None = None,
    devices: Sequence[Mapping[str, Any]] = (),
) -> list[PlanProblem]:
    """What makes ``plan`` impossible to build or run (all fatal): structural faults first, then
    (with ``devices``, the device dicts of the prompt) tasks on a device without what they state
    they need. These are not guards: ``GUARDS: off`` leaves them on."""
    known = set(device_ids) if device_ids is not None else None
    return _structure_problems(plan, known) or _requirement_problems(plan, devices)


def describe_problems(problems: list[PlanProblem]) -> str:
    """The problems as one feedback text for the model."""
    return "; ".join(p.text for p in problems)
