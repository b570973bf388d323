"""One-line hints added after a failed command, read from the result's structure, never from the
wording of an error message: the exit codes that the shell gives a meaning of its own.

A small model told only that a command failed tends to send the same command again; a hint says
what kind of failure it was and how a person at a terminal would go on.
"""

from __future__ import annotations

from starweave.commands import Result

# Exit codes bash itself sets (``man bash``, EXIT STATUS): what they mean, and what to do next.
_BY_EXIT_CODE = {
    127: (
        "Hint: exit code 127 means a program in the command is not installed here. Use another "
        "program that does the same (check with: command -v NAME)."
    ),
    126: (
        "Hint: exit code 126 means the file is not executable. Run it through its interpreter "
        "(bash FILE, python3 FILE) or make it executable with chmod +x."
    ),
    137: (
        "Hint: exit code 137 means the command was killed (a limit of this sandbox, often memory). "
        "Work on less data at once."
    ),
}
TIMEOUT_HINT = "Hint: the command ran out of time. Do less in one call, or make it finish sooner."


def failure_hint(results: list[Result]) -> str:
    """The hint for the first failed shell result of a step, or ""."""
    for result in results:
        value = result.result
        if result.ok or not isinstance(value, dict):
            continue
        if "exit_code" in value and value["exit_code"] is None and "stdout" in value:
            return TIMEOUT_HINT  # a timeout: the shell kept what it printed, and no exit code
        code = value.get("exit_code")
        if isinstance(code, int) and code in _BY_EXIT_CODE:
            return _BY_EXIT_CODE[code]
    return ""
