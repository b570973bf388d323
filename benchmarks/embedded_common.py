"""What the embedded-model benchmark's task suites share: a task, its outcome, and a CLI runner.

Each suite (``embedded_tasks_linux.py``, ``embedded_tasks_galaxy.py``, ``embedded_tasks_desktop.py``)
lists ``BenchTask`` entries; ``embedded_bench.py`` runs them through the real ``starweave`` CLI on
the embedded model, as a user would, and prints the success rate and the time per task.
"""

from __future__ import annotations

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
from typing import Any

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
