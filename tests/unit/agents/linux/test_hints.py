"""Hints after a failed command: matched on the command and its output, the first that fits."""

from __future__ import annotations

from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.hints import failure_hint
from starweave.commands import Result, ResultStatus


def test_habits_the_policy_refuses_get_a_way_that_works() -> None:
    blocked = "Error: Blocked: the command ends with a lone backslash"
    assert "find -exec does not work here" in failure_hint("find . -name '*.tmp' -exec rm {} \\", blocked)
    assert "rename is not available" in failure_hint("rename 's/a/b/' *.txt", "Error: Blocked: rename: ...")
    assert "no loops" in failure_hint("for f in *; do echo; done", "Blocked: the shell keyword 'for' is not")
    assert "python3" in failure_hint("python sum.py", "exit code 127\nstderr:\npython: command not found")
    assert "quoting" in failure_hint("echo 'a", "Error: Blocked: unterminated single quote")
    assert "write_file" in failure_hint(
        "python3 -c 'print(1)'", "Blocked: python3 -c: inline code is refused"
    )


def test_other_failures_get_no_hint() -> None:
    assert failure_hint("cat missing.txt", "exit code 1\nstderr:\ncat: missing.txt: No such file") == ""
    assert failure_hint("python3 sum.py", "exit code 1\nstderr:\nSyntaxError") == ""


def test_only_a_failed_call_gets_a_hint() -> None:
    ok = Result(status=ResultStatus.SUCCESS, result={"exit_code": 0, "stdout": "x\n", "stderr": ""})
    assert step_output([ok], "find . -name x -exec echo {} +") == "exit code 0\nstdout:\nx"
    refused = Result(status=ResultStatus.FAILURE, result={"success": False, "error": "Blocked: find -exec"})
    shown = step_output([refused], "find . -name x -exec rm {} +", note="Not finished.")
    assert shown.splitlines()[0] == "Not finished."
    assert shown.splitlines()[1] == "Error: Blocked: find -exec"
    assert shown.splitlines()[2].startswith("Hint: find -exec does not work here")
    assert step_output([], note="No action was given.") == "No action was given."


def test_the_find_exec_hint_shows_the_glob_of_the_failed_command() -> None:
    blocked = "Error: Blocked: find -exec runs commands the policy cannot check"
    hint = failure_hint("find cache -name '*.tmp' -exec rm {} \\;", blocked)
    assert "(like rm cache/*.tmp, or find cache -name '*.tmp' -delete)" in hint
    assert "(like rm -f *.log, or find . -name '*.log' -delete)" in failure_hint(
        'find . -type f -name "*.log" -exec rm -f {} +', blocked
    )
    assert "(like mv inbox/*.png images)" in failure_hint(
        "find inbox/ -iname *.png -exec mv {} images \\;", blocked
    )
    # Without a name pattern there is nothing to copy: a placeholder, never another task's names.
    assert "(like CMD DIR/*.EXT)" in failure_hint("find . -type f -exec wc -l {} \\;", blocked)
