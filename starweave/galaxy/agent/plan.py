"""A creation answer made whole, and checked for plans a device cannot carry out.

The small model is asked only for what it must decide (task ids, devices, descriptions, optional
tips, dependencies as from/to pairs); :func:`complete_plan` fills in the rest: task names from the
descriptions, short line ids (``l1``, ``l2``...) and condition descriptions. Answers in the
reference's full shape pass through unchanged.

:func:`plan_problems` finds what would make the plan fail on the devices: structural faults
(unknown tasks, cycles, unknown devices, a task on a device without the ``device_type`` or
``required_capabilities`` the task states: *fatal*, the plan cannot be built) and plans that are
obviously wrong for a fleet of separate machines (*not fatal*: a task that reads a file another
device made, uses a file the request puts on another device, names another device, refers to a
task it does not wait for, repeats another task, or names files from the prompt's example that the
request does not mention).
The agent feeds the problems back to the model and asks again; a plan that still has only
non-fatal problems after the last attempt runs anyway, since these checks are heuristics.
"""

from __future__ import annotations

import re
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


# A file name: a word with an extension (hello.txt, data.csv, notes.md).
_FILE = re.compile(r"(?<![\w/.-])([\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})\b")
# Verbs after which a file name is one the task makes itself (it may reuse another device's name).
_MAKES = re.compile(
    r"\b(create|creates|creating|write|writes|writing|save|saves|store|make|makes|put|touch|append|"
    r"named|called|into|to)\b",
    re.IGNORECASE,
)
# Verbs after which a file name is one the task reads.
_READS = re.compile(
    r"\b(read|reads|count|counts|combine|merge|compare|copy|concatenate|cat|use|uses|open|check|"
    r"verify|add|sum|get|fetch|take|show|print|display|list|from|of|in|with|both)\b",
    re.IGNORECASE,
)


def _made_here(description: str, position: int) -> bool:
    """Whether the nearest verb before ``position`` in the same clause makes the file."""
    clause = re.split(r"[.;:,]|\band\b|\bthen\b", description[:position])[-1]
    makes = [m.end() for m in _MAKES.finditer(clause)]
    reads = [m.end() for m in _READS.finditer(clause)]
    return bool(makes) and (not reads or max(makes) > max(reads))


def _files(description: str) -> list[tuple[str, bool]]:
    """File names in ``description`` and whether the task makes each one itself."""
    return [(m.group(1), _made_here(description, m.start())) for m in _FILE.finditer(description)]


def _predecessors(plan: TaskConstellationSchema) -> dict[str, set[str]]:
    direct: dict[str, set[str]] = {task_id: set() for task_id in plan.tasks}
    for line in plan.dependencies.values():
        if line.to_task_id in direct and line.from_task_id in plan.tasks:
            direct[line.to_task_id].add(line.from_task_id)
    closure: dict[str, set[str]] = {}
    for task_id in direct:
        seen: set[str] = set()
        stack = list(direct[task_id])
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(direct.get(current, ()))
        closure[task_id] = seen
    return closure


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


def _fleet_problems(plan: TaskConstellationSchema, device_ids: set[str] | None) -> list[PlanProblem]:
    problems: list[PlanProblem] = []
    tasks = plan.tasks
    before = _predecessors(plan)
    ids = [t for t in tasks if re.fullmatch(r"[A-Za-z]+\d+", t)]
    seen: dict[tuple[str | None, str], str] = {}
    for task in tasks.values():
        me, device, text = str(task.task_id), task.target_device_id, task.description
        first = seen.setdefault((device, " ".join(text.lower().split())), me)
        if first != me:  # a small model stuck in a loop writes the same task again and again
            problems.append(
                PlanProblem(f"task {me} repeats task {first} (the same work on {device}); plan each job once")
            )
            continue
        for other in sorted((device_ids or set()) - {device}):
            if re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", text):
                problems.append(
                    PlanProblem(
                        f"task {me} runs on {device} but its description names {other}: a task can "
                        f"only act on its own device; give {other}'s part its own task on {other}"
                    )
                )
        for other in ids:
            if other != me and other not in before[me] and re.search(rf"\b{re.escape(other)}\b", text):
                problems.append(
                    PlanProblem(
                        f"task {me} refers to {other} but does not depend on it; add the dependency "
                        f"{other} -> {me} or remove the mention"
                    )
                )
        for name, made in _files(text):
            if made:
                continue
            sources = [
                p
                for p in sorted(before[me])
                if tasks[p].target_device_id != device and name in tasks[p].description
            ]
            if sources:
                src = tasks[sources[0]]
                problems.append(
                    PlanProblem(
                        f"task {me} on {device} uses {name}, which {src.task_id} makes on "
                        f"{src.target_device_id}: a device cannot read another device's files. Let "
                        f"{src.task_id} report what {me} needs as text (a dependent task receives "
                        f"its prerequisites' text results), or drop {me} if nothing must be combined"
                    )
                )
    return problems


def request_files(request: str, device_ids: set[str]) -> dict[str, str]:
    """The files the request places on a device: in each clause (split at punctuation, "and" and
    "then") that names exactly one device, every file name belongs to that device."""
    placed: dict[str, str] = {}
    for clause in re.split(r"[,;.:!?](?:\s|$)|\band\b|\bthen\b", request):
        named = [d for d in device_ids if re.search(rf"(?<![\w-]){re.escape(d)}(?![\w-])", clause)]
        if len(named) == 1:
            for match in _FILE.finditer(clause):
                placed.setdefault(match.group(1), named[0])
    return placed


def _placement_problems(plan: TaskConstellationSchema, placed: dict[str, str]) -> list[PlanProblem]:
    problems = []
    for task in plan.tasks.values():
        for name, _made in _files(task.description):
            owner = placed.get(name)
            if owner is not None and task.target_device_id is not None and owner != task.target_device_id:
                problems.append(
                    PlanProblem(
                        f"task {task.task_id} on {task.target_device_id} uses {name}, but the request puts "
                        f"{name} on {owner}: only a task on {owner} can read or write it"
                    )
                )
    return problems


# A file name or a bare extension (".log").
_FILE_OR_EXTENSION = re.compile(r"(?<![\w/-])([\w-]*\.[A-Za-z][A-Za-z0-9]{0,5})\b")


def _copied_file_problems(plan: TaskConstellationSchema, request: str, example: str) -> list[PlanProblem]:
    """Files or extensions a task names from the prompt's example but the request does not: a
    small model copies its example's work ("the .log files") instead of doing the request's."""
    wanted, shown = request.lower(), example.lower()
    problems = []
    for task in plan.tasks.values():
        names = {m.group(1).lower() for m in _FILE_OR_EXTENSION.finditer(task.description)}
        copied = sorted(n for n in names if n not in wanted and n in shown)
        if copied:
            problems.append(
                PlanProblem(
                    f"task {task.task_id} names {', '.join(copied)} from the example, which the request "
                    "does not mention; describe the work this request asks for"
                )
            )
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


def plan_problems(
    plan: TaskConstellationSchema,
    device_ids: list[str] | None = None,
    request: str = "",
    example: str = "",
    devices: Sequence[Mapping[str, Any]] = (),
) -> list[PlanProblem]:
    """Everything wrong with ``plan``: fatal structural faults first (with ``devices``, the
    device dicts of the prompt, also tasks on a device without what they state they need), then
    fleet problems (with ``request``: also files used on another device than the one the request
    puts them on, and files copied from the prompt's ``example``)."""
    known = set(device_ids) if device_ids is not None else None
    structural = _structure_problems(plan, known) or _requirement_problems(plan, devices)
    if structural:
        return structural  # fleet checks assume a well-formed DAG on fitting devices
    placement = _placement_problems(plan, request_files(request, known)) if known and request else []
    copied = _copied_file_problems(plan, request, example) if request and example else []
    return _fleet_problems(plan, known) + placement + copied


def describe_problems(problems: list[PlanProblem]) -> str:
    """The problems as one feedback text for the model."""
    return "; ".join(p.text for p in problems)
