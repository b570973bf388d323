"""``starweave run --mode batch_normal|follower --plan FILE|FOLDER``: run each plan as its own task.

Every plan runs with the chosen agent in its own log folder ``<log dir>/<batch>/<plan name>/``
(``result.json``, and ``evaluation.log`` when the run is judged). A plan that fails, or cannot run
(bad plan, missing object), does not stop the batch. At the end a summary table goes to the
console and ``<log dir>/<batch>/summary.json`` holds the same rows: task, status, steps, time,
cost and the evaluation's verdict. Ctrl+C stops the batch; the summary of what ran is written first.

With ``--provider replay`` and a FOLDER as ``--replay-file``, each plan replays ``<plan name>.jsonl``
from it (each run starts its own model client).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from starweave.errors import ConfigError, StarweaveError
from starweave.log_folder import LogFolder, read_log_file
from starweave.redaction import redact
from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import DesktopOptions, run_host_task
from starweave.session.evaluation import EVALUATION_LOG
from starweave.session.logs import default_task_name
from starweave.session.loop import INTERRUPTED, INTERRUPTED_ERROR, secrets_of
from starweave.session.plan_objects import check_object, object_guard, opened_object, place_in_workspace
from starweave.session.plans import PlanEntry, RunMode, follower_request, read_plans
from starweave.session.runner import RunOptions, load_options_config, run_linux_task

SUMMARY_FILE = "summary.json"
#: The status of a plan that could not start (a bad plan file, a missing object or window).
ERROR = "ERROR"
NOT_RUN = "not run"
NO_VERDICT = "-"
#: Why a plan's run asks nothing (shown where a question or confirmation goes unasked).
UNATTENDED_BATCH = "a batch runs unattended"


@dataclass
class BatchRequest:
    """What ``starweave run`` was asked in a plan mode."""

    mode: RunMode
    plan: Path
    agent: str = "linux"
    desktop: DesktopOptions | None = None


async def run_batch(options: RunOptions, view: ConsoleView, batch: BatchRequest) -> dict[str, Any]:
    """Run every plan of ``batch.plan`` in turn; returns (and writes) the summary. Each plan runs
    one round, unattended: its view asks nothing (no question, confirmation, follow-up request nor
    save-experience question; a dangerous action runs only with ``--yes``)."""
    entries = read_plans(batch.plan, batch.mode)
    name = options.task or default_task_name()
    folder, secrets = _batch_folder(options, batch, name)
    unattended = view.without_asking(UNATTENDED_BATCH)
    rows: list[dict[str, Any]] = []
    try:
        for index, entry in enumerate(entries, start=1):
            if not view.quiet:
                view.console.rule(f"plan {index}/{len(entries)}: {entry.path.name}")
            rows.append(await _run_entry(options, unattended, batch, entry, folder))
    except asyncio.CancelledError:
        current = entries[len(rows)]
        rows.append(_row(current, INTERRUPTED, _saved_result(folder / current.name), INTERRUPTED_ERROR))
        rows.extend(_row(entry, NOT_RUN) for entry in entries[len(rows) :])
        _finish(view, folder, name, batch, rows, secrets)
        raise
    return _finish(view, folder, name, batch, rows, secrets)


def _batch_folder(options: RunOptions, batch: BatchRequest, name: str) -> tuple[Path, list[str]]:
    """``<log dir>/<batch name>``, from the configuration (the name is checked as ``--task`` is),
    and the keys to keep out of the summary."""
    config = load_options_config(replace(options, request=batch.mode.value, task=name), {})[0]
    return Path(config.system.log_dir).expanduser() / name, secrets_of(config)


async def _run_entry(
    options: RunOptions, view: ConsoleView, batch: BatchRequest, entry: PlanEntry, folder: Path
) -> dict[str, Any]:
    """One plan's row: its run's result, or ERROR with the reason it could not run."""
    if entry.plan is None:
        view.console.print(Text(f"error: {entry.error}", style="red"), soft_wrap=True)
        return _row(entry, ERROR, error=entry.error)
    try:
        result = await _run_plan(options, view, batch, entry, folder)
    except (StarweaveError, OSError) as exc:
        message = " ".join(str(exc).split())
        view.console.print(Text(f"error: {entry.path.name}: {message}", style="red"), soft_wrap=True)
        return _row(entry, ERROR, error=message)
    return _row(entry, str(result.get("status", "")), result=result)


async def _run_plan(
    options: RunOptions, view: ConsoleView, batch: BatchRequest, entry: PlanEntry, folder: Path
) -> dict[str, Any]:
    """Run one valid plan with the batch's agent (its object placed, opened or found first)."""
    plan = entry.plan
    assert plan is not None  # only valid entries get here
    replay = options.replay_file
    if replay is not None and replay.is_dir():
        replay = replay / f"{entry.name}.jsonl"
    run = replace(options, request=plan.task, task=entry.name, log_dir=folder, replay_file=replay)
    if batch.mode is RunMode.FOLLOWER:
        desktop = replace(batch.desktop or DesktopOptions(), follow_window=plan.object or "")
        return await run_host_task(replace(run, request=follower_request(plan)), view, desktop)
    source = entry.object_path()
    if source is None:
        if batch.agent == "host":
            return await run_host_task(run, view, batch.desktop)
        return await run_linux_task(run, view)
    # The object is used only if a sandboxed command could read it: a plan may come from anyone.
    # Checked off the loop: the first check looks for the machine's secrets, as the sandbox does.
    config, workspace = load_options_config(run, {})
    guard = object_guard(workspace, config.system.shell.read_roots, entry.object_folder())
    if batch.agent == "host":
        checked = await asyncio.to_thread(check_object, source, guard)
        async with opened_object(checked, plan.close) as title:
            if title:
                run = replace(run, request=f"{plan.task} (in the open window {title!r})")
            return await run_host_task(run, view, batch.desktop)
    placed = await asyncio.to_thread(place_in_workspace, source, workspace, guard)
    run = replace(run, request=f"{plan.task} (the file: {placed.name}, in the workspace)")
    return await run_linux_task(run, view)


def _row(
    entry: PlanEntry, status: str, result: dict[str, Any] | None = None, error: str = ""
) -> dict[str, Any]:
    """One summary row."""
    result = result or {}
    log_path = str(result.get("log_path", ""))
    return {
        "plan": str(entry.path),
        "task": entry.name,
        "request": entry.plan.task if entry.plan else "",
        "status": status,
        "steps": int(result.get("steps", 0)),
        "time": float(result.get("duration", 0.0)),
        "cost": float(result.get("cost", 0.0)),
        "evaluation": _verdict(Path(log_path)) if log_path else NO_VERDICT,
        "log_path": log_path,
        "error": error or str(result.get("error", "")),
    }


def _saved_result(log_path: Path) -> dict[str, Any] | None:
    """The ``result.json`` a stopped run wrote (None when it had not started, or when what lies
    there is not Starweave's: the log folder may be in the workspace, where a link is never read)."""
    try:
        saved = json.loads(read_log_file(log_path / "result.json"))
    except (OSError, ConfigError, ValueError):  # ValueError: not JSON, or not UTF-8
        return None
    return saved if isinstance(saved, dict) else None


def _verdict(log_path: Path) -> str:
    """The run's evaluation verdict (``complete``: yes, no, unsure) from its evaluation.log, or "-".
    A line that is not a JSON object (the model's commands may write there) is skipped."""
    try:
        data = read_log_file(log_path / EVALUATION_LOG)
    except (OSError, ConfigError):
        return NO_VERDICT
    verdict = NO_VERDICT
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            verdict = str(record.get("complete", NO_VERDICT))
    return verdict


def _finish(
    view: ConsoleView,
    folder: Path,
    name: str,
    batch: BatchRequest,
    rows: list[dict[str, Any]],
    secrets: list[str],
) -> dict[str, Any]:
    """Write ``summary.json`` (secrets removed), print the table; the summary."""
    finished = sum(1 for row in rows if row["status"] == "FINISH")
    summary = {
        "batch": name,
        "mode": batch.mode.value,
        "agent": batch.agent,
        "plan": str(batch.plan),
        "status": "FINISH" if finished == len(rows) else "FAIL",
        "finished": finished,
        "total": len(rows),
        "cost": round(sum(row["cost"] for row in rows), 6),
        "plans": rows,
        "summary_path": str(folder / SUMMARY_FILE),
    }
    text = redact(json.dumps(summary, indent=2, ensure_ascii=False), secrets)
    # As the runs' logs are written: never through a symlink a model planted in the folder.
    logs = LogFolder(Path(os.path.abspath(folder)))
    try:
        logs.replace(SUMMARY_FILE, (text + "\n").encode("utf-8"))
    finally:
        logs.close()
    summary = json.loads(text)
    print_summary(view, summary)
    return summary


STATUS_STYLES: dict[str, str] = {"FINISH": "green", NOT_RUN: "dim", INTERRUPTED: "yellow"}


def print_summary(view: ConsoleView, summary: dict[str, Any]) -> None:
    """The summary table: one row per plan, then the totals and where summary.json is."""
    table = Table(title=f"batch {summary['batch']}: {summary['finished']}/{summary['total']} finished")
    for column, justify in (("task", "left"), ("status", "left"), ("steps", "right"), ("time", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("cost", justify="right")
    table.add_column("evaluation")
    for row in summary["plans"]:
        style = STATUS_STYLES.get(row["status"], "red")
        table.add_row(
            row["task"],
            Text(row["status"], style=style),
            str(row["steps"]),
            f"{row['time']:.1f}s",
            f"${row['cost']:.4f}",
            row["evaluation"],
        )
    # Shown even with --quiet: the table is the batch's result.
    view.console.print(table)
    view.console.print(f"summary: {summary['summary_path']}", soft_wrap=True, highlight=False)
