"""What the embedded-model benchmark's task suites share: a task, its outcome, and a CLI runner.

Each suite (``embedded_tasks_linux.py``, ``embedded_tasks_galaxy.py``, ``embedded_tasks_desktop.py``)
lists ``BenchTask`` entries; ``embedded_bench.py`` runs them through the real ``starweave`` CLI on
the embedded model, as a user would, and prints the success rate and the time per task.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
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
