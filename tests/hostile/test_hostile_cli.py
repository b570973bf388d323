"""A smaller set of hostile cases replayed end to end, as the hostile review did:
``starweave run --provider replay --replay-file ... --yes``, with the run's output and every log it
wrote searched for canary secrets, under bubblewrap as root as the review ran it (every mode with
HOSTILE_E2E_MODES=all)."""

from __future__ import annotations

import pytest

from hostile.casebook import all_cases
from hostile.modes import selected_e2e_modes
from hostile.session import Verdicts, case_params, explain

CASES = all_cases()


def test_the_end_to_end_set_covers_the_families() -> None:
    chosen = [c for c in CASES.values() if c.e2e]
    assert 10 <= len(chosen) <= 40  # a bound on the set's time: each case is a whole CLI run or two
    assert len({c.family for c in chosen}) >= 8


@pytest.mark.parametrize(
    ("hostile_mode", "hostile_kind", "hostile_case"), case_params("e2e", selected_e2e_modes(), only_e2e=True)
)
def test_replayed_run_leaks_nothing_and_changes_nothing_outside(
    hostile_verdicts: Verdicts, hostile_mode: str, hostile_kind: str, hostile_case: str
) -> None:
    verdict = hostile_verdicts.get((hostile_mode, hostile_kind, hostile_case))
    if verdict.get("skip"):
        pytest.skip(verdict["skip"])
    assert not verdict["problems"], explain(CASES[hostile_case], verdict)
