"""The agreement benchmark (benchmarks/evaluation_agreement.py) on recorded answers: each task runs
through the real CLI with --evaluate, its check is the suite's, its verdict the run's evaluation.log;
the figures count agreement, and a "yes" on a failed check, as disagreement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.evaluation import verdict as judged
from helpers.linux_replay import replay_file
from integration.test_linux_chores import BY_NAME, GOOD, POOR

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from evaluation_agreement import agreement, judge_task  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_script_reports_check_verdict_and_agreement_as_a_table_and_json(tmp_path: Path) -> None:
    # --max-steps 1 stops the two-step chore after its first step: the check fails, the judge says no.
    answers = replay_file(tmp_path, [GOOD["count_lines"][0], judged("no", "stopped after one step")])
    out = tmp_path / "figures.json"
    options = [
        "--only",
        "count_lines",
        "--max-steps",
        "1",
        "--provider",
        "replay",
        "--replay-file",
        str(answers),
    ]
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "evaluation_agreement.py"), *options, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    figures = json.loads(out.read_text())
    assert (figures["tasks"], figures["judged"], figures["agreed"], figures["agreement_rate"]) == (
        1,
        1,
        1,
        1.0,
    )
    assert figures["no_or_unsure_and_failed"] == 1 and figures["checks_passed"] == 0
    assert figures["outcomes"][0]["extra"]["verdict"] == "no" and figures["outcomes"][0]["steps"] == 1
    table = " ".join(proc.stdout.split())
    assert "│ count_lines │ failed │ no │ yes │" in table and "agreement 1/1 = 100%" in table


def test_a_yes_on_a_failed_check_disagrees_and_a_missing_verdict_is_not_counted(tmp_path: Path) -> None:
    runs = [
        ("demo", POOR["demo"] + [judged("yes", "done")]),
        ("demo", GOOD["demo"] + [judged("yes", "done")]),
    ]
    runs.append(("count_lines", POOR["count_lines"]))  # no line left for the judge: no verdict
    outcomes = []
    for index, (name, answers) in enumerate(runs):
        folder = tmp_path / str(index)
        folder.mkdir()
        extra = ["--provider", "replay", "--replay-file", str(replay_file(folder, answers))]
        outcomes.append(judge_task(BY_NAME[name], folder / "work", 120, extra))
    assert [(o.ok, o.extra["verdict"]) for o in outcomes] == [(False, "yes"), (True, "yes"), (False, None)]
    figures = agreement(outcomes)
    assert (figures["judged"], figures["agreed"], figures["no_verdict"]) == (2, 1, 1)
    assert figures["agreement_rate"] == 0.5 and figures["yes_precision"] == 0.5
    assert figures["yes_but_failed"] == 1 and figures["yes_and_passed"] == 1


def test_claims_run_the_scripted_agent_and_ask_the_judge_about_each_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluation_agreement import run_claims

    # The judge replays too here: it says "yes" to everything, so only the wrong answers disagree.
    judge = replay_file(tmp_path, [judged("yes", "looks right")])
    monkeypatch.setenv("STARWEAVE_EVALUATION_AGENT__REPLAY_FILE", str(judge))
    outcomes = run_claims(180, ["replay"], names=["count_lines", "largest_file"])
    figures = agreement(outcomes)
    assert [o.name for o in outcomes] == [
        "count_lines (right answer)",
        "largest_file (right answer)",
        "count_lines (wrong answer)",
        "largest_file (wrong answer)",
    ]
    assert [o.ok for o in outcomes] == [True, True, False, False]
    assert figures["yes_but_failed"] == 2 and figures["agreed"] == 2
    right = outcomes[0]
    assert right.extra["status"] == "FINISH" and right.steps == 2 and right.extra["verdict"] == "yes"
