"""Plan files of the batch and follower modes (the reference's ``PlanReader``, spec D §15).

A plan is one JSON object:

* batch (``--mode batch_normal``): ``{"task": str, "object": "draft.txt" (optional), "close": bool}``;
* follower (``--mode follower``): ``{"task": str, "steps": ["1. ...", ...], "object": str}``.

``--plan`` names one plan file or a folder, whose ``*.json`` files run one after another in name
order. JSON booleans are required (``true``, not Python's ``True``). The object's file is looked up
as the reference does: for a plan in ``Parent/tasks/`` in ``Parent/files/``, otherwise next to the
plan file. A problem with one plan of a folder (bad JSON, a missing key, a missing object file) is
that plan's error only; the others still run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from starweave.errors import ConfigError


class RunMode(StrEnum):
    """``starweave run --mode``."""

    NORMAL = "normal"
    BATCH = "batch_normal"
    FOLLOWER = "follower"


class PlanError(ConfigError):
    """A plan file (or the ``--plan`` path) that cannot be used; the message names the file."""


class Plan(BaseModel):
    """One plan file's content, strictly typed (the keys of both modes' plans)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    task: str = Field(min_length=1)
    object: str | None = None
    close: StrictBool = False
    steps: list[str] | None = None


@dataclass
class PlanEntry:
    """A plan file of the batch: its name (the task's log folder), the plan, or why it cannot run."""

    path: Path
    name: str
    plan: Plan | None = None
    error: str = ""

    def object_folder(self) -> Path:
        """Where the reference looks a relative object up: ``Parent/files`` for a plan in
        ``Parent/tasks/``, otherwise the plan's own folder."""
        folder = self.path.parent
        return folder.parent / "files" if folder.name == "tasks" else folder

    def object_path(self) -> Path | None:
        """The object's file by the reference's rule (``tasks``→``files``), or None without object."""
        if self.plan is None or not self.plan.object:
            return None
        given = Path(self.plan.object).expanduser()
        return given if given.is_absolute() else self.object_folder() / given

    def object_file(self) -> Path | None:
        """The object's existing file (None without object); a missing one is a :class:`PlanError`."""
        path = self.object_path()
        if path is not None and not path.is_file():
            raise PlanError(f"{self.path}: object {self.plan.object if self.plan else ''!r}: no file {path}")
        return path


def _problem(exc: ValidationError) -> str:
    """The first validation error as ``key: what is wrong`` (booleans get the JSON spelling)."""
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"]) or "plan"
    kind = error["type"]
    if kind == "missing":
        return f"'{key}' is missing"
    if kind == "extra_forbidden":
        return f"unknown key '{key}' (a plan has task, object, close, steps)"
    if kind.startswith("bool"):
        return f"'{key}' must be a JSON boolean, true or false"
    if kind == "string_too_short":
        return f"'{key}' is empty"
    return f"'{key}': {error['msg']}"


def parse_plan(path: Path, mode: RunMode) -> Plan:
    """Read and check one plan file for ``mode``; every problem is a one-line :class:`PlanError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: cannot read the plan: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if any(word in text for word in ("True", "False", "None")):
            hint = "; use JSON true/false/null, not Python's True/False/None"
        raise PlanError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno}){hint}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{path}: a plan is a JSON object, got {type(data).__name__}")
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        raise PlanError(f"{path}: {_problem(exc)}") from None
    if mode is RunMode.FOLLOWER:
        if not plan.steps or not all(step.strip() for step in plan.steps):
            raise PlanError(f"{path}: a follower plan needs 'steps', a list of non-empty strings")
        if not plan.object:
            raise PlanError(f"{path}: a follower plan needs 'object': the open window's title (or file)")
    return plan


def read_plans(source: Path, mode: RunMode) -> list[PlanEntry]:
    """The plans of ``--plan``: one file (a problem raises), or a folder's ``*.json`` in name order
    (a problem stays with its entry). A missing path or an empty folder raises."""
    source = source.expanduser()
    if source.is_file():
        return [PlanEntry(source, source.stem, parse_plan(source, mode))]
    if not source.is_dir():
        raise PlanError(f"--plan {source}: no such file or folder")
    files = sorted(p for p in source.glob("*.json") if p.is_file())
    if not files:
        raise PlanError(f"--plan {source}: the folder holds no plan files (*.json)")
    entries = []
    for path in files:
        try:
            entries.append(PlanEntry(path, path.stem, parse_plan(path, mode)))
        except PlanError as exc:
            entries.append(PlanEntry(path, path.stem, error=str(exc)))
    return entries


def check_mode(mode: str, plan: Path | None, request: str | None, agent: str) -> RunMode:
    """The ``--mode`` given, checked against ``--plan``, the request and ``--agent`` (ConfigError)."""
    try:
        run_mode = RunMode(mode)
    except ValueError:
        raise PlanError(f"unknown --mode {mode!r}; choose normal, batch_normal or follower") from None
    if run_mode is RunMode.NORMAL:
        if plan is not None:
            raise PlanError("--plan runs with --mode batch_normal or --mode follower")
        if not request:
            raise PlanError("missing the request: say what the agent should do (or give --mode and --plan)")
        return run_mode
    if plan is None:
        raise PlanError(f"--mode {run_mode} needs --plan FILE|FOLDER (one plan file, or a folder of them)")
    if request:
        raise PlanError(f"--mode {run_mode} takes its requests from --plan; leave out the request argument")
    if run_mode is RunMode.FOLLOWER and agent != "host":
        raise PlanError("--mode follower works in an open application window: use it with --agent host")
    return run_mode


def follower_request(plan: Plan) -> str:
    """What the AppAgent is asked in follower mode: the task and the steps to follow, in order."""
    steps = "\n".join(step.strip() for step in plan.steps or [])
    return f"{plan.task}\nFollow these steps, in order, one after another, then FINISH:\n{steps}"
