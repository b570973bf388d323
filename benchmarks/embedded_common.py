"""What the embedded-model benchmark's task suites share: a task, its outcome, and a CLI runner.

Each suite (``embedded_tasks_linux.py``, ``embedded_tasks_galaxy.py``, ``embedded_tasks_desktop.py``)
lists ``BenchTask`` entries; ``embedded_bench.py`` runs them through the real ``starweave`` CLI on
the embedded model, as a user would, and prints the success rate and the time per task.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


@dataclass(frozen=True)
class BenchTask:
    """One benchmark task.

    ``setup(workdir)`` prepares the folder the CLI runs in (for a single-device task it is the
    workspace); ``check(workdir, result)`` gets that folder and the run's ``result.json`` (``{}``
    when there is none) and returns ``None`` when the task was done right, else the reason.
    """

    name: str
    request: str
    check: Callable[[Path, dict[str, Any]], str | None]
    setup: Callable[[Path], None] = lambda _workdir: None


@dataclass
class Outcome:
    """How one task went."""

    name: str
    ok: bool
    seconds: float
    reason: str = ""
    steps: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def run_cli(
    args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> tuple[int, str, float]:
    """Run ``starweave <args>`` in ``cwd``; (exit code, combined output, wall seconds).

    A run that exceeds ``timeout`` is killed and reported with exit code -9.
    """
    started = time.monotonic()
    merged = {**os.environ, "COLUMNS": "120", **(env or {})}
    try:
        done = subprocess.run(
            [*STARWEAVE, *args],
            cwd=cwd,
            env=merged,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        output = (exc.stdout or "") if isinstance(exc.stdout, str) else ""
        return -9, output + f"\n(killed after {timeout:g} s)", time.monotonic() - started
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def newest_result(folder: Path) -> dict[str, Any]:
    """The newest ``result.json`` under ``folder`` (``{}`` when there is none or it is unreadable)."""
    found = sorted(folder.rglob("result.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        return {}
    try:
        data = json.loads(found[-1].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def file_text(path: Path) -> str:
    """The file's text, or "" when it does not exist (checks compare against it)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def checked_run(
    task: BenchTask,
    workdir: Path,
    args: list[str],
    timeout: float,
    env: dict[str, str] | None = None,
    logs: Path | None = None,
) -> Outcome:
    """Set up ``workdir``, run ``starweave <args>`` there and check the outcome (the newest
    ``result.json`` under ``logs`` when given, else under ``workdir``): the suites whose check
    reads the run's own result. A check that raises is a failed task, not a stopped benchmark."""
    workdir.mkdir(parents=True, exist_ok=True)
    task.setup(workdir)
    code, output, seconds = run_cli(args, workdir, timeout, env)
    result = (newest_result(logs) if logs else {}) or newest_result(workdir)
    if code == -9:
        reason: str | None = f"timed out after {timeout:g} s"
    elif not result:
        reason = f"no result.json (exit {code}): {output.strip()[-300:]}"
    else:
        try:
            reason = task.check(workdir, result)
        except Exception as exc:  # a check must not end the benchmark
            reason = f"the check failed: {type(exc).__name__}: {exc}"
    return Outcome(
        task.name,
        reason is None,
        seconds,
        reason or "",
        steps=int(result.get("steps") or 0),
        extra={
            "status": result.get("status"),
            "result": result.get("result"),
            "tokens": result.get("tokens"),
        },
    )


def show_outcome(outcome: Outcome) -> None:
    """One line per task, as a suite run alone prints it."""
    mark = "ok  " if outcome.ok else "FAIL"
    line = f"{mark} {outcome.name:16} {outcome.seconds:6.1f} s {outcome.steps:2d} steps  {outcome.reason}"
    print(line, flush=True)


def chosen_tasks(tasks: Sequence[BenchTask], names: Sequence[str] | None) -> list[BenchTask]:
    """``tasks``, or those of them ``names`` names (in the suite's order); ValueError for an unknown name."""
    unknown = sorted(set(names or ()) - {t.name for t in tasks})
    if unknown:
        raise ValueError(f"unknown task(s) {', '.join(unknown)}; known: {', '.join(t.name for t in tasks)}")
    return [t for t in tasks if not names or t.name in names]


def run_each(
    tasks: Sequence[BenchTask],
    run: Callable[[BenchTask, Path], Outcome],
    prefix: str,
    keep: Path | None = None,
    report: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run every task in a fresh temporary folder, one after the other: ``run(task, folder)``.

    Each folder is copied to ``keep/<task name>`` when ``keep`` is given, then removed; ``report``
    sees each outcome as soon as it is known (a suite takes many minutes).
    """
    outcomes = []
    for task in tasks:
        workdir = Path(tempfile.mkdtemp(prefix=f"{prefix}-{task.name}-"))
        try:
            outcomes.append(run(task, workdir))
            if report is not None:
                report(outcomes[-1])
        finally:
            if keep is not None:
                shutil.copytree(workdir, keep / task.name, dirs_exist_ok=True, symlinks=True)
            shutil.rmtree(workdir, ignore_errors=True)
    return outcomes


class RunTask(Protocol):
    """Runs one task of a suite in ``workdir`` (a fresh folder) and checks it."""

    def __call__(
        self,
        task: BenchTask,
        workdir: Path,
        timeout: float,
        env: dict[str, str] | None = None,
        extra_args: Sequence[str] = (),
    ) -> Outcome: ...


class Suite(Protocol):
    """A suite's ``run_<part>_suite``: the tasks (all, or those named) one after the other."""

    def __call__(
        self,
        timeout: float = ...,
        names: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        keep: Path | None = None,
        extra_args: Sequence[str] = (),
        report: Callable[[Outcome], None] | None = None,
    ) -> list[Outcome]: ...


def make_suite(tasks: Sequence[BenchTask], run_task: RunTask, prefix: str, default_timeout: float) -> Suite:
    """The ``run_<part>_suite`` function of ``tasks``: each task in a fresh ``<prefix>-*`` folder with at
    most ``timeout`` seconds, ``env`` added to the CLI's environment and ``extra_args`` to its command
    line; ``keep`` keeps the folders, ``report`` sees each outcome as it comes."""

    def run_suite(
        timeout: float = default_timeout,
        names: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        keep: Path | None = None,
        extra_args: Sequence[str] = (),
        report: Callable[[Outcome], None] | None = None,
    ) -> list[Outcome]:
        def run(task: BenchTask, workdir: Path) -> Outcome:
            return run_task(task, workdir, timeout, env, extra_args)

        return run_each(chosen_tasks(tasks, names), run, prefix, keep, report)

    return run_suite


def suite_arguments(description: str, default_timeout: float) -> argparse.Namespace:
    """The command line of a suite run alone: ``--timeout S``, ``--only NAME ...``, ``--keep DIR``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--timeout", type=float, default=default_timeout, help="seconds per task")
    parser.add_argument("--only", nargs="*", help="task names to run")
    parser.add_argument("--keep", type=Path, help="keep each task's work folder here")
    return parser.parse_args()
