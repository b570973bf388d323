"""The phone's benchmark suite (benchmarks/embedded_tasks_mobile.py) on recorded answers: a right run
saves the note and passes the check, a wrong one fails it; the runs go through the real CLI, the
checked-in simulator wrapper and a phone of the task's own, as on the embedded model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.linux_replay import replay_file
from helpers.mobile_replay import note_answers

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from embedded_tasks_mobile import PHONE_DIR, TASKS, cli_args, run_mobile_suite

pytestmark = pytest.mark.slow

BY_NAME = {task.name: task for task in TASKS}


def test_every_task_asks_for_its_own_note() -> None:
    assert len(TASKS) >= 3
    notes = {task.name: task.request for task in TASKS}
    assert len(set(notes.values())) == len(TASKS)
    # Saving a note never asks: without --yes a false CONFIRM is refused and fails the task.
    assert all("--yes" not in cli_args(task) for task in TASKS)


@pytest.mark.parametrize(("note", "ok"), [("buy milk", True), ("buy mlik", False)])
def test_the_check_reads_the_note_the_run_saved(tmp_path: Path, note: str, ok: bool) -> None:
    extra = ["--provider", "replay", "--replay-file", str(replay_file(tmp_path, note_answers(note)))]
    keep = tmp_path / "kept"
    [outcome] = run_mobile_suite(timeout=120, names=["note_buy_milk"], keep=keep, extra_args=extra)
    assert outcome.ok is ok, (outcome.reason, outcome.extra)
    assert outcome.extra["status"] == "FINISH" and outcome.extra["phone"]["notes"] == [note]
    if not ok:
        assert outcome.reason == "the phone's notes are ['buy mlik'], not ['buy milk'] (run FINISH)"
    # The phone was the task's own: its state is in the task's work folder.
    assert (keep / "note_buy_milk" / PHONE_DIR / "state.json").is_file()


def test_a_phone_left_untouched_fails_the_check(tmp_path: Path) -> None:
    task = BY_NAME["note_call_mom"]
    assert task.check(tmp_path, {"status": "FAIL"}) == "the phone's notes are [], not ['call mom'] (run FAIL)"
