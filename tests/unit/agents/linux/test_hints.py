"""Hints after a failed command: matched on the command and bash's own error output, the first that fits."""

from __future__ import annotations

from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.hints import failure_hint
from starweave.commands import Result, ResultStatus


def test_habits_that_fail_get_a_way_that_works() -> None:
    missing = "exit code 127\nstderr:\nbash: line 1: rename: command not found"
    assert "Rename with a loop" in failure_hint("rename 's/a/b/' *.txt", missing)
    assert "python3" in failure_hint("python sum.py", "exit code 127\nstderr:\npython: command not found")
    open_quote = "exit code 2\nstderr:\nbash: -c: line 1: unexpected EOF while looking for matching `''"
    assert "quote is not closed" in failure_hint("echo 'a", open_quote)


def test_other_failures_get_no_hint() -> None:
    assert failure_hint("cat missing.txt", "exit code 1\nstderr:\ncat: missing.txt: No such file") == ""
    assert failure_hint("python3 sum.py", "exit code 1\nstderr:\nSyntaxError") == ""
    # A command that merely names rename but failed for another reason gets nothing.
    assert failure_hint("rename 's/a/b/' *.txt", "exit code 1\nstderr:\nNo such file") == ""


def test_only_a_failed_call_gets_a_hint() -> None:
    ok = Result(status=ResultStatus.SUCCESS, result={"exit_code": 0, "stdout": "x\n", "stderr": ""})
    assert step_output([ok], "python sum.py") == "exit code 0\nstdout:\nx"
    failed = Result(
        status=ResultStatus.FAILURE,
        result={"success": False, "exit_code": 127, "stdout": "", "stderr": "python: command not found"},
    )
    shown = step_output([failed], "python sum.py", note="Not finished.")
    assert shown.splitlines()[0] == "Not finished."
    assert shown.splitlines()[-1] == "Hint: the interpreter is python3."
    assert step_output([], note="No action was given.") == "No action was given."
