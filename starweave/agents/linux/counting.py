"""Counting files with a command that counts something else: the mistakes a small model makes.

A request to count files is often answered with a command whose number is not the file count:

* ``wc -l FILE...`` counts the lines inside the files;
* ``ls -l [DIR] | wc -l`` counts the "total N" line that a long listing of a folder starts with,
  so an empty folder has "1 file".

:func:`miscounted_files` returns the note that refuses such a FINISH once (see ``finish``).
"""

from __future__ import annotations

import re

_COUNTS_FILES = re.compile(r"\b(count|how many|number of)\b.{0,80}?\bfiles\b", re.IGNORECASE)
_MENTIONS_LINES = re.compile(r"\blines?\b", re.IGNORECASE)
_WC_ON_FILES = re.compile(r"^\s*wc\s+-l\s+(?P<files>[^|<>;&]+?)\s*$")
_LONG_LISTING = re.compile(
    r"^\s*ls\s+(?P<flags>(?:-[A-Za-z]+\s+)*-[A-Za-z]+)(?P<args>(?:\s+[^\s|<>;&]+)*)\s*\|\s*wc\s+-l\s*$"
)
# An argument ls lists the contents of (a folder), as far as its text tells: no glob, no extension.
_NOT_A_FOLDER = re.compile(r"[*?\[\]]|\.[A-Za-z][A-Za-z0-9]{0,7}$")


def miscounted_files(request: str, command: str, output: str, *, ran_call: bool) -> str:
    """The note for a request that counts files answered after ``command`` printed ``output``,
    when that command counted something other than files; else "".

    ``ran_call``: the FINISH itself carried the command (the ``wc -l FILE...`` check applies only
    to a FINISH after it, whose answer the listed entries already give).
    """
    if not _COUNTS_FILES.search(request) or _MENTIONS_LINES.search(request):
        return ""
    return _long_listing(command, output) or ("" if ran_call else _lines_not_files(command, output))


def _lines_not_files(command: str, output: str) -> str:
    found = _WC_ON_FILES.match(command)
    if found is None:
        return ""
    files = found["files"]
    # wc prints "N name" per file and a "N total" line when there are several: its entries are the
    # files, so the count the request wants is already on screen.
    entries = [m[1] for m in re.finditer(r"(?m)^\s*\d+\s+(.+?)\s*$", output) if m[1] != "total"]
    listed = f" Its output lists {len(entries)} file(s): that is the number of files." if entries else ""
    return (
        f"Not finished: wc -l {files} counts the lines inside each file, not the files.{listed} To count "
        f"files, count the lines of their listing: ls -d {files} | wc -l"
    )


def _long_listing(command: str, output: str) -> str:
    found = _LONG_LISTING.match(command)
    if found is None:
        return ""
    letters = "".join(found["flags"].replace("-", "").split())
    args = found["args"].split()
    # -d lists the folder itself; a file or glob argument gets no "total" line.
    if "l" not in letters or "d" in letters or len(args) > 1 or any(_NOT_A_FOLDER.search(a) for a in args):
        return ""
    # -a lists "." and ".." too; -A lists the other hidden entries only.
    extra = 3 if "a" in letters else 1
    plain = " ".join(["ls", *(["-A"] if set(letters) & {"a", "A"} else []), *args])
    numbers = re.findall(r"(?m)^\s*(\d+)\s*$", output)
    counted = int(numbers[-1]) if numbers else None
    shown = "the total line" + (', "." and ".."' if extra == 3 else "")
    if counted is None or counted < extra:
        figure = f"{shown} besides the files"
    else:
        lines = f"{counted} line{'s' if counted != 1 else ''}"
        figure = f"{lines}, {shown} among them: the number of files is {counted - extra}"
    return (
        f'Not finished: ls -l starts its listing with a "total" line, so {command.strip()} counts '
        f"{figure}. To count the files themselves: {plain} | wc -l"
    )
