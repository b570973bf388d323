"""The ConstellationAgent's plan guards (the contract is in ``starweave.agent.guards``).

A proposed creation plan that can be built (``plan.plan_faults`` found nothing) may still be wrong
for a fleet of separate machines. Each guard states one general principle; none names a verb, a
phrasing or a task. Asked about the proposed constellation, in this order:

* ``repeat``: each job is planned once;
* ``own_device``: a task acts only on its own device;
* ``waits_for``: a task that mentions another task depends on it;
* ``handoff``: only text crosses devices, never a file;
* ``placement``: a file the request puts on one device is used only there;
* ``example``: a task does the request's work, not the prompt example's.

A refusal sends the plan back to the model with the note; the model's next plan runs even if a
guard still objects (the contract's "refused once"): these checks are heuristics. ``GUARDS: off``
turns the table off; the faults of ``plan.plan_faults`` stay checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starweave.agent.guards import ALLOW, GuardState, GuardTable, Verdict, refuse
from starweave.galaxy.agent.plan import PlanProblem, plan_faults
from starweave.galaxy.constellation import TaskConstellationSchema

# A file name: a word with an extension (hello.txt, data.csv, notes.md).
_FILE = re.compile(r"(?<![\w/.-])([\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})\b")
# A file name or a bare extension (".log").
_FILE_OR_EXTENSION = re.compile(r"(?<![\w/-])([\w-]*\.[A-Za-z][A-Za-z0-9]{0,5})\b")
# A clause of a request: split at punctuation and the words that join clauses.
_CLAUSE = re.compile(r"[,;.:!?](?:\s|$)|\band\b|\bthen\b", re.IGNORECASE)
# A task id as the prompt asks for them (t1, t2...): a word and a number.
_TASK_ID = re.compile(r"[A-Za-z]+\d+")


def file_names(text: str) -> set[str]:
    """The file names (a stem, a dot and an extension) in ``text``."""
    return {m.group(1) for m in _FILE.finditer(text)}


def _names(device: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(device)}(?![\w-])", text) is not None


def request_files(request: str, device_ids: set[str]) -> dict[str, frozenset[str]]:
    """Where the request puts its files: a file named in a clause that names exactly one device is
    on that device; a file so named with several devices (in different clauses) is on each."""
    placed: dict[str, set[str]] = {}
    for clause in _CLAUSE.split(request):
        named = [d for d in device_ids if _names(d, clause)]
        if len(named) == 1:
            for name in file_names(clause):
                placed.setdefault(name, set()).add(named[0])
    return {name: frozenset(devices) for name, devices in placed.items()}


@dataclass
class PlanStep:
    """What the plan guards see: the proposed plan (completed, buildable), the online devices'
    ids, the request and the text of the prompt's example."""

    plan: TaskConstellationSchema
    device_ids: list[str]
    request: str = ""
    example: str = ""
    before: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.before = prerequisites(self.plan)


def prerequisites(plan: TaskConstellationSchema) -> dict[str, set[str]]:
    """Every task's prerequisites, direct or not (the tasks it waits for, through any chain)."""
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


class _PlanGuard:
    """A plan guard: :meth:`problems` lists what breaks its principle; the note joins them."""

    name = ""
    principle = ""

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        """What in ``step`` breaks this guard's principle."""
        raise NotImplementedError

    async def check(self, step: PlanStep, state: GuardState) -> Verdict:
        """Refuse the plan when anything breaks the principle."""
        found = self.problems(step)
        return refuse("; ".join(p.text for p in found)) if found else ALLOW


class Repeat(_PlanGuard):
    """The same task twice: a small model stuck in a loop writes it again and again."""

    name = "repeat"
    principle = (
        "Each job is planned once: a second task with the same description on the same device repeats it."
    )

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        seen: dict[tuple[str | None, str], str] = {}
        found = []
        for me, task in step.plan.tasks.items():
            key = (task.target_device_id, " ".join(task.description.lower().split()))
            first = seen.setdefault(key, me)
            if first != me:
                found.append(
                    PlanProblem(
                        f"task {me} repeats task {first} (the same work on "
                        f"{task.target_device_id}); plan each job once"
                    )
                )
        return found


class OwnDevice(_PlanGuard):
    """A task whose description names another device."""

    name = "own_device"
    principle = (
        "A task acts only on its own device: a description naming another device belongs on that device."
    )

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        found = []
        for me, task in step.plan.tasks.items():
            device = task.target_device_id
            for other in sorted(set(step.device_ids) - {str(device)}):
                if _names(other, task.description):
                    found.append(
                        PlanProblem(
                            f"task {me} runs on {device} but its description names {other}: a task can "
                            f"only act on its own device; give {other}'s part its own task on {other}"
                        )
                    )
        return found


class WaitsFor(_PlanGuard):
    """A task that refers to another task's id without depending on it."""

    name = "waits_for"
    principle = "A task that mentions another task waits for it: a task id in a description is a dependency."

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        ids = [t for t in step.plan.tasks if _TASK_ID.fullmatch(t)]
        found = []
        for me, task in step.plan.tasks.items():
            for other in ids:
                if (
                    other != me
                    and other not in step.before[me]
                    and re.search(rf"\b{other}\b", task.description)
                ):
                    found.append(
                        PlanProblem(
                            f"task {me} refers to {other} but does not depend on it; add the dependency "
                            f"{other} -> {me} or remove the mention"
                        )
                    )
        return found


class Handoff(_PlanGuard):
    """A file passed from one device to another: only a prerequisite's text result crosses."""

    name = "handoff"
    principle = (
        "Only text crosses devices: a file named by a prerequisite on another device is out of reach, "
        "unless the request puts it on both."
    )

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        tasks = step.plan.tasks
        placed = request_files(step.request, set(step.device_ids)) if step.request else {}
        found = []
        for me, task in tasks.items():
            device = task.target_device_id
            for name in sorted(file_names(task.description)):
                if device in placed.get(name, ()):
                    continue  # the request has this file on the task's own device as well
                sources = [
                    p
                    for p in sorted(step.before[me])
                    if tasks[p].target_device_id != device and name in file_names(tasks[p].description)
                ]
                if sources:
                    src = tasks[sources[0]]
                    found.append(
                        PlanProblem(
                            f"task {me} on {device} uses {name}, which {src.task_id} uses on "
                            f"{src.target_device_id}: a device cannot read another device's files. Let "
                            f"{src.task_id} report what {me} needs as text (a dependent task receives "
                            f"its prerequisites' text results), or drop {me} if nothing must be combined"
                        )
                    )
        return found


class Placement(_PlanGuard):
    """A task using a file the request puts on another device."""

    name = "placement"
    principle = "A file the request puts on one device is read and written only by tasks on that device."

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        if not step.request:
            return []
        placed = request_files(step.request, set(step.device_ids))
        found = []
        for task in step.plan.tasks.values():
            device = task.target_device_id
            for name in sorted(file_names(task.description)):
                owners = placed.get(name)
                if owners and device is not None and device not in owners:
                    owner = " or ".join(sorted(owners))
                    found.append(
                        PlanProblem(
                            f"task {task.task_id} on {device} uses {name}, but the request puts {name} "
                            f"on {owner}: only a task on {owner} can read or write it"
                        )
                    )
        return found


class Example(_PlanGuard):
    """Work copied from the prompt's example: a small model copies its example's files."""

    name = "example"
    principle = (
        "A task does the request's work: a file or extension of the prompt's example that the request "
        "never names was copied."
    )

    def problems(self, step: PlanStep) -> list[PlanProblem]:
        if not step.request or not step.example:
            return []
        wanted, shown = step.request.lower(), step.example.lower()
        found = []
        for task in step.plan.tasks.values():
            names = {m.group(1).lower() for m in _FILE_OR_EXTENSION.finditer(task.description)}
            copied = sorted(n for n in names if n not in wanted and n in shown)
            if copied:
                found.append(
                    PlanProblem(
                        f"task {task.task_id} names {', '.join(copied)} from the example, which the "
                        "request does not mention; describe the work this request asks for"
                    )
                )
        return found


GUARDS: tuple[type[_PlanGuard], ...] = (Repeat, OwnDevice, WaitsFor, Handoff, Placement, Example)


def plan_guards(enabled: bool = True) -> GuardTable[PlanStep]:
    """The ConstellationAgent's plan table, in the order the guards are asked."""
    return GuardTable([guard() for guard in GUARDS], enabled)


def guard_problems(step: PlanStep) -> list[PlanProblem]:
    """What every plan guard finds in ``step``, in table order (the warnings of a plan that runs
    although a guard objects)."""
    return [problem for guard in GUARDS for problem in guard().problems(step)]


def plan_problems(
    plan: TaskConstellationSchema,
    device_ids: list[str] | None = None,
    request: str = "",
    example: str = "",
    devices: Sequence[Mapping[str, Any]] = (),
) -> list[PlanProblem]:
    """Everything wrong with ``plan``: its faults (``plan.plan_faults``) or, when it has none,
    what the guards find (with ``request`` and ``example``, also the request's file placement and
    files copied from the example)."""
    faults = plan_faults(plan, device_ids, devices)
    if faults:
        return faults  # the guards assume a well-formed DAG on fitting devices
    return guard_problems(PlanStep(plan, list(device_ids or []), request, example))
