"""The public-task benchmark: tasks the project did not write, run on the embedded model.

66 tasks adapted from public task sets (``benchmarks/public_tasks/``): 47 InterCode-Bash queries
(``princeton-nlp/intercode``) on its prepared file trees and 19 Terminal-Bench tasks
(``laude-institute/terminal-bench``) that need no network, container or GPU. Each runs as a user runs
it: ``starweave run "<request>" --workspace . --yes --json`` on the default provider (the embedded
model) in a fresh workspace that the task's setup filled; the run's logs go next to the workspace
(``--log-dir``), not into it, so that a query about "all the files" sees only the task's files. The
check reads the real outcome: the workspace and the answer in the run's ``result.json``.

Run::

    .venv/bin/python benchmarks/public_bench.py [--half dev|test|both] [--guards on|off]
        [--only NAME ...] [--timeout S] [--keep DIR] [--json FILE]

``--half`` picks the tasks of one half of the split (``public_tasks/split.json``; default ``dev``),
``--only`` some of them by name; ``--keep DIR`` keeps each task's folder (workspace and logs) in
``DIR/<task>``; ``--json FILE`` saves every outcome. It prints one line per task as it ends, then per
half the pass rate and each task's steps and seconds, with their medians.

The honest split: a task is in the dev half when the first byte of sha256 of its name is even, else
in the test half; the split was made once and is kept in ``split.json``. Rules and prompts may be
changed only from what the dev half shows; the test half is only ever scored, and a rise is reported
from the test half, never from the dev half. Report both halves with ``--guards on`` and ``off``.

``--guards off`` runs the CLI with ``STARWEAVE_SYSTEM__GUARDS=off`` (``on``, the default, leaves the
variable unset): the LinuxAgent then runs without its guard table (README, *Guards*).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_common import BenchTask, Outcome, checked_run, make_suite, show_outcome
from public_tasks import HALVES, TASKS, load_split, tasks_in
from public_tasks.common import make_writable

DEFAULT_TIMEOUT = 600.0


def cli_args(task: BenchTask, log_dir: Path, extra: Sequence[str] = ()) -> list[str]:
    """The ``starweave`` arguments that run ``task`` in the current folder, logging to ``log_dir``."""
    return ["run", task.request, "--workspace", ".", "--yes", "--json", "--log-dir", str(log_dir), *extra]


def run_task(
    task: BenchTask,
    workdir: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> Outcome:
    """Prepare ``workdir/workspace``, run ``task`` there through the CLI (logs in ``workdir/logs``)
    and check the outcome."""
    workspace, logs = workdir / "workspace", workdir / "logs"
    outcome = checked_run(task, workspace, cli_args(task, logs, extra_args), timeout, env, logs=logs)
    make_writable(workdir)  # a task may leave a folder at mode 000; --keep and the clean-up need it
    return outcome


run_public_suite = make_suite(TASKS, run_task, "sw-public", DEFAULT_TIMEOUT)


def summary(half: str, outcomes: list[Outcome]) -> dict[str, object]:
    """Print one half's table (steps and seconds per task, medians, pass rate) and return its figures."""
    passed = sum(o.ok for o in outcomes)
    steps = [o.steps for o in outcomes]
    seconds = [o.seconds for o in outcomes]
    print(f"\n== {half}: {passed}/{len(outcomes)} passed ({100 * passed / max(1, len(outcomes)):.0f}%)")
    print(f"   {'task':45} {'ok':4} {'steps':>5} {'seconds':>8}  reason")
    for o in outcomes:
        print(f"   {o.name:45} {'yes' if o.ok else 'NO':4} {o.steps:5d} {o.seconds:8.1f}  {o.reason[:70]}")
    if outcomes:
        print(f"   {'median':45} {'':4} {statistics.median(steps):5.1f} {statistics.median(seconds):8.1f}")
    return {
        "tasks": len(outcomes),
        "passed": passed,
        "pass_rate": passed / len(outcomes) if outcomes else 0.0,
        "median_steps": statistics.median(steps) if steps else 0,
        "median_seconds": statistics.median(seconds) if seconds else 0.0,
        "outcomes": [o.__dict__ for o in outcomes],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen half (or both) and print the figures; exit 2 on an unknown task name."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--half", choices=[*HALVES, "both"], default="dev", help="which half of the split")
    parser.add_argument(
        "--guards", choices=["on", "off"], default="on", help="off: STARWEAVE_SYSTEM__GUARDS=off"
    )
    parser.add_argument("--only", nargs="*", default=None, help="run only these task names")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per task")
    parser.add_argument("--keep", type=Path, default=None, help="keep each task's folder here")
    parser.add_argument("--json", type=Path, default=None, help="save the outcomes as JSON here")
    args = parser.parse_args(argv)
    known = {t.name for t in TASKS}
    unknown = sorted(set(args.only or ()) - known)
    if unknown:
        print(f"unknown task(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    chosen = [t.name for t in tasks_in(args.half) if not args.only or t.name in args.only]
    if not chosen:
        print(f"no task of the {args.half} half is among {', '.join(args.only or [])}", file=sys.stderr)
        return 2
    env = {"STARWEAVE_SYSTEM__GUARDS": "off"} if args.guards == "off" else {}
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(f"{len(chosen)} task(s), half {args.half}, guards {args.guards}, at most {args.timeout:g} s each")
    started = time.monotonic()
    outcomes = run_public_suite(args.timeout, chosen, env, args.keep, report=show_outcome)
    split = load_split()
    figures: dict[str, object] = {"guards": args.guards, "wall_seconds": time.monotonic() - started}
    for half in HALVES:
        mine = [o for o in outcomes if split.get(o.name) == half]
        if mine:
            figures[half] = summary(half, mine)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
        print(f"outcomes saved to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
