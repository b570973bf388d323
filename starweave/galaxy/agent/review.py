"""When the ConstellationAgent needs the model after tasks end, and how it repairs the model's edits.

Review modes (``ConstellationSettings.review_mode``):

- ``"always"``: the reference's behaviour: every batch of task results gets a model call.
- ``"fast"`` (the default): the model is asked only when its answer can change something: a task
  failed (or the DAG ended with one unfinished); after :data:`MAX_FAILED_TASKS` failures the run
  stops with their errors instead. A task that completed needs no review: its
  dependents receive its result in their request anyway (``orchestrator.requests``), so nothing
  has to be copied. When every task completed, the run finishes with an answer built from the
  task results (:func:`final_answer`) when the plan ends in one task (its result is where the work
  arrived); a plan that ends in several tasks (:func:`final_tasks`) has results still to be put
  together, so one model call gives that answer and nothing else.

:func:`repair_edits` fixes what a small model gets wrong in edits before they reach the editor:
an ``add_task`` whose id is taken gets the next free id (later calls of the same answer that name
the old id follow it), a missing or taken ``dependency_id`` is generated, and an ``update_task`` of a
task that already failed (the editor would refuse it) becomes what the model meant: a new task
that redoes it with the update, after the same prerequisites (once per task: a redo is never
redone). Each repair is reported as a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starweave.galaxy.agent.response import ActionCommandInfo
from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStatus
from starweave.galaxy.orchestrator.requests import result_text

REVIEW_MODES: tuple[str, ...] = ("fast", "always")
"""The values of ``ConstellationSettings.review_mode``."""
ANSWER_CHARS = 300
"""Each task's part of a built final answer is cut to this many characters."""
MAX_FAILED_TASKS = 3
"""In review mode "fast", the run stops (FAIL, without a model call) once this many tasks failed:
a small model redoing a task that keeps failing would loop until the step budget ends."""
REDO_PREFIX = "redo of "


@dataclass(frozen=True)
class ReviewDecision:
    """Whether to ask the model about a batch of results; if not, whether the request is done."""

    ask_model: bool
    reason: str
    finish: bool = False  # every task completed: the answer is all that is left
    fail: bool = False  # too many tasks failed: the run ends with ``reason``


def _ended(tasks: list[TaskStar]) -> str:
    return ", ".join(t.task_id for t in tasks)


def final_tasks(constellation: TaskConstellation) -> list[TaskStar]:
    """The tasks no other task waits for: where the plan's work ends."""
    sources = {line.from_task_id for line in constellation.dependencies.values()}
    return [t for t in constellation.get_all_tasks() if t.task_id not in sources]


def review_decision(constellation: TaskConstellation, task_ids: list[str], mode: str) -> ReviewDecision:
    """Whether the model must review the results of ``task_ids`` under review ``mode``."""
    if mode == "always":
        return ReviewDecision(True, "review mode 'always': every result is reviewed")
    ended = [t for t in (constellation.get_task(i) for i in task_ids) if t is not None]
    failed = [t for t in ended if t.status is not TaskStatus.COMPLETED]
    all_failed = constellation.get_failed_tasks()
    if failed and len(all_failed) >= MAX_FAILED_TASKS:
        errors = "; ".join(f"{t.task_id}: {t.error}" for t in all_failed)
        return ReviewDecision(
            False, f"{len(all_failed)} tasks failed, so the run stops ({errors})", fail=True
        )
    if failed:
        return ReviewDecision(True, f"task {_ended(failed)} did not complete")
    if not constellation.is_complete():
        return ReviewDecision(
            False, f"task {_ended(ended)} completed; tasks that depend on it get its result"
        )
    unfinished = [t for t in constellation.get_all_tasks() if t.status is not TaskStatus.COMPLETED]
    if unfinished:
        return ReviewDecision(True, f"the plan ended with task {_ended(unfinished)} not completed")
    ends = final_tasks(constellation)
    if len(ends) > 1:
        # Several results no task has combined yet: the answer puts them together (a sum, a
        # comparison, a summary), which only the model can do from the request.
        return ReviewDecision(
            True, f"every task completed; the results of {_ended(ends)} make one answer", True
        )
    return ReviewDecision(False, "every task completed successfully", finish=True)


def final_answer(constellation: TaskConstellation) -> str:
    """The request's answer from its tasks' results, one line per task in execution order."""
    tasks = constellation.tasks
    order = constellation.get_topological_order() if not constellation.has_cycle() else list(tasks)
    lines = []
    for task_id in order:
        task = tasks[task_id]
        answer = " ".join(result_text(task.result, ANSWER_CHARS).split())
        lines.append(f"{task_id} on {task.target_device_id}: {answer}")
    return "\n".join(lines)


def _next_id(prefix: str, taken: set[str]) -> str:
    numbers = [int(m.group(1)) for i in taken if (m := re.fullmatch(rf"{re.escape(prefix)}(\d+)", i))]
    return f"{prefix}{max(numbers, default=0) + 1}"


def _redo(
    action: ActionCommandInfo,
    failed: TaskStar,
    constellation: TaskConstellation,
    task_ids: set[str],
    line_ids: set[str],
) -> list[ActionCommandInfo]:
    """``update_task`` of a task that already failed, as a new task that redoes it with the update
    (on its device unless the update moves it, after the same prerequisites)."""
    args = action.arguments
    new = _next_id("t", task_ids)
    task_ids.add(new)
    redo: dict[str, Any] = {
        "task_id": new,
        "description": args.get("description") or failed.description,
        "target_device_id": args.get("target_device_id") or failed.target_device_id,
    }
    if args.get("tips") or failed.tips:
        redo["tips"] = args.get("tips") or failed.tips
    redo["name"] = f"{REDO_PREFIX}{failed.task_id}"
    calls = [ActionCommandInfo(function="add_task", arguments=redo)]
    for source in sorted({line.from_task_id for line in constellation.get_task_dependencies(failed.task_id)}):
        line_id = _next_id("l", line_ids)
        line_ids.add(line_id)
        arguments = {"dependency_id": line_id, "from_task_id": source, "to_task_id": new}
        calls.append(ActionCommandInfo(function="add_dependency", arguments=arguments))
    return calls


def _redoable(task: TaskStar, constellation: TaskConstellation) -> bool:
    """A failed task is redone once, and a redo never again (that is how loops start)."""
    if task.status is not TaskStatus.FAILED or task.name.startswith(REDO_PREFIX):
        return False
    return not any(t.name == f"{REDO_PREFIX}{task.task_id}" for t in constellation.get_all_tasks())


def repair_edits(
    actions: list[ActionCommandInfo], constellation: TaskConstellation | None
) -> tuple[list[ActionCommandInfo], list[str]]:
    """``actions`` with their ids repaired against ``constellation`` (see the module docstring), and
    an ``update_task`` of a failed task turned into a redo; returns the calls and one note per repair."""
    task_ids = set(constellation.tasks) if constellation is not None else set()
    line_ids = set(constellation.dependencies) if constellation is not None else set()
    renamed: dict[str, str] = {}
    notes: list[str] = []
    out: list[ActionCommandInfo] = []
    for action in actions:
        args = dict(action.arguments)
        action.arguments = args
        if action.function == "add_task":
            given = str(args.get("task_id") or "").strip()
            if not given or given in task_ids:
                new = _next_id("t", task_ids)
                what = f"task id {given!r} is taken" if given else "it had no task id"
                notes.append(f"add_task: {what}, so the new task is {new}")
                if given:
                    renamed[given] = new
                args["task_id"] = given = new
            task_ids.add(given)
        elif action.function == "add_dependency":
            for key in ("from_task_id", "to_task_id"):
                if args.get(key) in renamed:
                    args[key] = renamed[args[key]]
            given = str(args.get("dependency_id") or "").strip()
            if not given or given in line_ids:
                new = _next_id("l", line_ids)
                if given:
                    notes.append(f"add_dependency: dependency id {given!r} is taken, so it is {new}")
                args["dependency_id"] = given = new
            line_ids.add(given)
        elif action.function == "update_task":
            if args.get("task_id") in renamed:
                args["task_id"] = renamed[args["task_id"]]
            target = constellation.get_task(str(args.get("task_id"))) if constellation is not None else None
            if constellation is not None and target is not None and _redoable(target, constellation):
                redo = _redo(action, target, constellation, task_ids, line_ids)
                notes.append(
                    f"update_task: {target.task_id} already failed, so the update is a new task "
                    f"{redo[0].arguments['task_id']} that redoes it"
                )
                out += redo
                continue
        out.append(action)
    return out, notes
