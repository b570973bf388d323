"""One-line hints added after a failed command, for the mistakes small models make again and again.

The embedded model has strong habits the shell policy refuses (``find … -exec … \\;``, ``rename``,
``for`` loops, ``python`` instead of ``python3``) and, told only that the command was refused, it
tends to send the same command again. A hint names a way that works here. Hints are matched on
the command and on the output it got; a failed call gets the first that matches.
"""

from __future__ import annotations

import re

_FIND_EXEC = re.compile(r"\bfind\b.*\s-(exec|execdir|ok)\b")
# find DIR ... -name PATTERN ... -exec CMD {} REST: the glob that does the same in one folder.
_FIND_PARTS = re.compile(
    r"\bfind\s+(?P<dir>[^\s-][^\s]*)?.*?-i?name\s+(?P<q>['\"]?)(?P<pat>[^'\"\s]+)(?P=q)"
    r".*?-(?:exec|execdir|ok)\s+(?P<cmd>[\w.-]+(?:\s+-[\w-]+)*)(?:\s+\{\}(?P<rest>[^\\;+]*))?"
)
# The placeholder example when the command does not show its parts: copied as is, it fails clearly.
_GENERIC_GLOB = "like CMD DIR/*.EXT"

# (pattern in the command, pattern in the output, hint); None matches anything. A hint's {glob} is
# the glob form of the failed find command: an example with other names gets copied word for word.
_HINTS: tuple[tuple[re.Pattern[str] | None, re.Pattern[str] | None, str], ...] = (
    (
        _FIND_EXEC,
        None,
        "Hint: find -exec does not work here. Give the command a glob instead ({glob}), "
        "or pipe the names: find ... | xargs CMD; to rename many files, write a python3 script.",
    ),
    (
        re.compile(r"(^|[|;&]\s*)rename\b"),
        None,
        "Hint: rename is not available. List the files with ls, then mv each one (mv d/a.x d/a.y && "
        "mv d/b.x d/b.y), or write a python3 script with write_file that renames them and run it.",
    ),
    (
        re.compile(r"(^|[|;&]\s*)(for|while|until)\s.*\bdo\b"),
        re.compile(r"shell keyword '(for|while|until|if|case)'|variable expansion"),
        "Hint: no loops or variables. Use a glob (cmd dir/*.txt), find ... | xargs CMD, or write a "
        "python3 script with write_file and run it.",
    ),
    (
        None,
        re.compile(r"shell keyword '(for|while|until|if|case)'"),
        "Hint: no loops or if. Run one command at a time, use a glob (cmd dir/*.txt), or write a "
        "python3 script with write_file and run it.",
    ),
    (
        re.compile(r"(^|[|;&]\s*)python\s"),
        re.compile(r"python: (command )?not found"),
        "Hint: the interpreter is python3.",
    ),
    (
        None,
        re.compile(r"lone backslash|unterminated (single|double) quote"),
        "Hint: keep quoting simple: single quotes around a pattern, no backslash at the end.",
    ),
    (
        None,
        re.compile(r"here-document|inline code is refused"),
        "Hint: write the text or code to a file with write_file first, then use the file.",
    ),
)


def glob_example(command: str) -> str:
    """The glob form of ``find DIR -name PAT -exec CMD {} \\;`` ("like rm cache/*.tmp"), or a
    placeholder when the command does not show a folder, a name pattern and a command."""
    found = _FIND_PARTS.search(command)
    if found is None:
        return _GENERIC_GLOB
    folder = (found["dir"] or ".").rstrip("/")
    path = found["pat"] if folder == "." else f"{folder}/{found['pat']}"
    rest = " ".join((found["rest"] or "").split())
    example = f"like {found['cmd']} {path}" + (f" {rest}" if rest else "")
    if found["cmd"].split()[0] == "rm":
        # find's own -delete is allowed in the workspace and also reaches subfolders.
        example += f", or find {folder} -name '{found['pat']}' -delete"
    return example


def failure_hint(command: str, output: str) -> str:
    """The first hint for a failed ``command`` whose output was ``output``, or ""."""
    for on_command, on_output, hint in _HINTS:
        if (on_command is None or on_command.search(command)) and (
            on_output is None or on_output.search(output)
        ):
            return hint.replace("{glob}", glob_example(command)) if "{glob}" in hint else hint
    return ""
