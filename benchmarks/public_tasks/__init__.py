"""Tasks adapted from public task sets, split once into a dev half and a test half.

The suites: :mod:`public_tasks.intercode` (InterCode-Bash queries on its prepared trees) and
:mod:`public_tasks.terminal_bench`, :mod:`~public_tasks.terminal_bench_data`,
:mod:`~public_tasks.terminal_bench_security`, :mod:`~public_tasks.terminal_bench_code` (Terminal-Bench
tasks). ``benchmarks/public_bench.py`` runs
them through the real CLI.

The split: a task is in the dev half when the first byte of ``sha256(name)`` is even, else in the
test half (:func:`half_of`). ``split.json`` next to this file records it (name → "dev"/"test"); a
unit test checks that the file lists every task and agrees with the hash. Rules and prompts may be
changed only from what the dev half shows; the test half is only ever scored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from public_tasks import (
    intercode,
    terminal_bench,
    terminal_bench_code,
    terminal_bench_data,
    terminal_bench_security,
)
from public_tasks.common import PublicTask

SPLIT_FILE = Path(__file__).with_name("split.json")
HALVES = ("dev", "test")

TASKS: list[PublicTask] = [
    *intercode.TASKS,
    *terminal_bench.TASKS,
    *terminal_bench_data.TASKS,
    *terminal_bench_security.TASKS,
    *terminal_bench_code.TASKS,
]


def half_of(name: str) -> str:
    """The half a task belongs to: "dev" when sha256(name)'s first byte is even, else "test"."""
    return "dev" if hashlib.sha256(name.encode()).digest()[0] % 2 == 0 else "test"


def load_split() -> dict[str, str]:
    """The recorded split (task name → half)."""
    data = json.loads(SPLIT_FILE.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def tasks_in(half: str) -> list[PublicTask]:
    """The tasks of one half ("dev" or "test") as the split file records it, or all ("both")."""
    if half == "both":
        return list(TASKS)
    if half not in HALVES:
        raise ValueError(f"unknown half {half!r}; choose dev, test or both")
    split = load_split()
    return [task for task in TASKS if split.get(task.name) == half]
