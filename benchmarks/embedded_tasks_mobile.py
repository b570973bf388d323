"""Phone tasks for the embedded-model benchmark: the MobileAgent saves a note on the simulated phone.

No Android device exists on these machines, so the phone is the tests' simulated one: the checked-in
wrapper ``tests/helpers/android_sim/adb`` given as ``--adb-path``, its state in a folder of the task's
own (``STARWEAVE_ANDROID_SIM_DIR``), so every task starts on a fresh phone's launcher. Each task is
run as a user runs it: ``starweave run --agent mobile "<request>" --adb-path ADB --workspace . --json
--max-steps 10`` in a fresh work folder; the check reads the phone's state: the notes it saved.
No task passes ``--yes``: writing and saving a note must never ask for CONFIRM (typing is
reversible), so a false CONFIRM, refused without ``--yes``, fails the task instead of hiding.

How ``embedded_bench.py`` calls it::

    from embedded_tasks_mobile import run_mobile_suite
    outcomes = run_mobile_suite(timeout=600.0, names=None, report=print)   # list[Outcome], TASKS order

``run_mobile_suite(timeout, names=None, env=None, keep=None, extra_args=(), report=None)``: as the
other suites (``extra_args`` go to ``starweave run``: the tests pass ``--provider replay
--replay-file F``). The phone's state after the run goes into ``Outcome.extra["phone"]`` (``notes``,
``screen``). Run alone: ``.venv/bin/python benchmarks/embedded_tasks_mobile.py [--timeout S] [--only
NAME ...] [--keep DIR]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from embedded_common import BenchTask, Outcome, checked_run, make_suite, show_outcome, suite_arguments
from helpers.android_sim.phone.state import DIR_ENV, read_state

#: The simulated phone's adb: the checkout's venv Python running sim_adb.py.
SIM_ADB = Path(__file__).resolve().parent.parent / "tests" / "helpers" / "android_sim" / "adb"
#: The phone's state folder inside a task's work folder.
PHONE_DIR = "phone"
MAX_STEPS = 10
TIMEOUT = 600.0


def phone_folder(workdir: Path) -> Path:
    """The simulated phone's state folder of the task run in ``workdir``."""
    return workdir / PHONE_DIR


def saved_note(note: str) -> Callable[[Path, dict[str, Any]], str | None]:
    """A check: the phone's Notes app holds exactly ``note`` (surrounding spaces aside)."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        notes = [str(n).strip() for n in read_state(phone_folder(workdir))["notes"]]
        if notes == [note]:
            return None
        return f"the phone's notes are {notes!r}, not [{note!r}] (run {result.get('status')})"

    return check


def task(name: str, request: str, note: str) -> BenchTask:
    """A notes task: ``request`` must leave ``note`` saved on the phone."""
    return BenchTask(name, request, saved_note(note))


TASKS: list[BenchTask] = [
    task("note_call_mom", "open the notes app, write the note 'call mom' and save it", "call mom"),
    task("note_buy_milk", "Save a note saying 'buy milk' in the Notes app.", "buy milk"),
    task("note_dentist", "Add a note 'dentist at 3pm' to my notes on the phone.", "dentist at 3pm"),
    task("note_keys", "In Notes, write 'pick up the keys' and save it.", "pick up the keys"),
]


def cli_args(task: BenchTask, extra: Sequence[str] = ()) -> list[str]:
    """The ``starweave`` arguments that run ``task`` on the simulated phone."""
    return [
        "run", "--agent", "mobile", task.request, "--adb-path", str(SIM_ADB),
        "--workspace", ".", "--json", "--max-steps", str(MAX_STEPS), *extra,
    ]  # fmt: skip


def run_task(
    task: BenchTask,
    workdir: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> Outcome:
    """Run ``task`` on a fresh simulated phone whose state lives in ``workdir/phone``."""
    phone = {DIR_ENV: str(phone_folder(workdir))}
    outcome = checked_run(task, workdir, cli_args(task, extra_args), timeout, {**(env or {}), **phone})
    state = read_state(phone_folder(workdir))
    outcome.extra["phone"] = {"notes": state["notes"], "screen": state["screen"]}
    return outcome


run_mobile_suite = make_suite(TASKS, run_task, "sw-mobile", TIMEOUT)


def main() -> None:
    """Run the suite on the embedded model and print one line per task, then the totals."""
    args = suite_arguments(__doc__.split("\n")[0], TIMEOUT)
    outcomes = run_mobile_suite(args.timeout, args.only, None, args.keep, report=show_outcome)
    print(f"{sum(o.ok for o in outcomes)}/{len(outcomes)} saved the note")


if __name__ == "__main__":
    main()
