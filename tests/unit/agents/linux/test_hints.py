"""Hints after a failed command: read from the exit codes bash gives a meaning, never from wording."""

from __future__ import annotations

from typing import Any

from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.hints import TIMEOUT_HINT, failure_hint
from starweave.commands import Result, ResultStatus


def _shell(code: int | None, stderr: str = "", **extra: Any) -> Result:
    value = {"success": code == 0, "exit_code": code, "stdout": "", "stderr": stderr, **extra}
    return Result(status=ResultStatus.SUCCESS if code == 0 else ResultStatus.FAILURE, result=value)


def test_the_shells_own_exit_codes_get_a_hint_whatever_the_message_says() -> None:
    assert "not installed here" in failure_hint([_shell(127, "zsh-like wording: no such program")])
    assert "not executable" in failure_hint([_shell(126)])
    assert "killed" in failure_hint([_shell(137)])
    assert failure_hint([_shell(None, error="Timeout after 5s.")]) == TIMEOUT_HINT


def test_ordinary_failures_and_other_tools_get_no_hint() -> None:
    assert failure_hint([_shell(1, "cat: missing.txt: No such file")]) == ""
    assert failure_hint([_shell(2, "bash: -c: line 1: unexpected EOF while looking for matching")]) == ""
    not_shell = Result(status=ResultStatus.FAILURE, result={"success": False, "error": "not a directory"})
    assert failure_hint([not_shell]) == ""
    assert failure_hint([_shell(0)]) == ""


def test_only_a_failed_call_gets_a_hint() -> None:
    ok = Result(status=ResultStatus.SUCCESS, result={"exit_code": 0, "stdout": "x\n", "stderr": ""})
    assert step_output([ok]) == "exit code 0\nstdout:\nx"
    shown = step_output([_shell(127, "python: command not found")], note="Not finished.")
    assert shown.splitlines()[0] == "Not finished."
    assert shown.splitlines()[-1].startswith("Hint: exit code 127")
    assert step_output([], note="No action was given.") == "No action was given."
