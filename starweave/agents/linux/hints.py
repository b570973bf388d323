"""One-line hints added after a failed command, for the mistakes small models make again and again.

A small model told only that a command failed tends to send the same command again. A hint names
a way that works. Hints are matched on the command and on bash's own error output; a failed call
gets the first that matches.
"""

from __future__ import annotations

import re

# (pattern in the command, pattern in the output, hint); None matches anything.
_HINTS: tuple[tuple[re.Pattern[str] | None, re.Pattern[str] | None, str], ...] = (
    (
        re.compile(r"(^|[|;&]\s*)rename\b"),
        re.compile(r"rename: (command )?not found"),
        'Hint: rename is not installed. Rename with a loop: for f in d/*.x; do mv "$f" "${f%.x}.y"; done',
    ),
    (
        re.compile(r"(^|[|;&]\s*)python\s"),
        re.compile(r"python: (command )?not found"),
        "Hint: the interpreter is python3.",
    ),
    (
        None,
        re.compile(r"unexpected EOF while looking for matching|unexpected end of file"),
        "Hint: a quote is not closed. Keep quoting simple: single quotes around a pattern, or write "
        "the program to a file with write_file and run it.",
    ),
)


def failure_hint(command: str, output: str) -> str:
    """The first hint for a failed ``command`` whose output was ``output``, or ""."""
    for on_command, on_output, hint in _HINTS:
        if (on_command is None or on_command.search(command)) and (
            on_output is None or on_output.search(output)
        ):
            return hint
    return ""
