"""Every hostile case, through the real MCP tools, in each way the suite runs (bubblewrap and the
Landlock fallback, each as root and as an unprivileged user; see hostile.modes).

A case passes when it is refused or runs harmlessly: nothing changes outside the workspace, no canary
secret appears in any result or log, every call ends within its deadline, nothing is left running and
no set-id file, device node or FIFO is left in the workspace.
"""

from __future__ import annotations

import pytest

from hostile.casebook import all_cases
from hostile.modes import selected_modes
from hostile.session import Verdicts, case_params, explain

CASES = all_cases()


@pytest.mark.parametrize(
    ("hostile_mode", "hostile_kind", "hostile_case"), case_params("mcp", selected_modes())
)
def test_attack_is_refused_or_harmless(
    hostile_verdicts: Verdicts, hostile_mode: str, hostile_kind: str, hostile_case: str
) -> None:
    verdict = hostile_verdicts.get((hostile_mode, hostile_kind, hostile_case))
    if verdict.get("skip"):
        pytest.skip(verdict["skip"])
    assert not verdict["problems"], explain(CASES[hostile_case], verdict)
