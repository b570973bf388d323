"""Glob expansion with a budget: the same matches as :func:`glob.glob` (``*``, ``?`` and ``[...]``
per path component, hidden names only for patterns that start with a dot, no ``**`` recursion),
but every directory entry read is counted, so ``echo /*/*/*/*/*/*/*/*`` is refused after a bounded
amount of work instead of walking /proc for minutes. The paths it builds are bounded too: each under
PATH_MAX, all of them together under MAX_ARGV_BYTES, so ``d*/a/a/a...`` (thousands of plain parts
behind a glob matching thousands of folders) is refused at once instead of building gigabytes."""

from __future__ import annotations

import fnmatch
import os
import re

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.budget import MAX_ARGV_BYTES, PATH_MAX, Budget

MAGIC = re.compile(r"[*?\[]")
MAX_MATCHES = 10_000
TICK = 1024  # paths built between two looks at the clock
SHOWN_CHARS = 120  # of a pattern quoted in a refusal


def has_magic(text: str) -> bool:
    """Whether ``text`` holds a glob character."""
    return MAGIC.search(text) is not None


def _list(directory: str, budget: Budget, shown: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            entries = []
            for entry in it:
                entries.append(entry)
                if len(entries) % 1024 == 0:
                    budget.spend(1024, f"the pattern {shown!r}")
            budget.spend(len(entries) % 1024, f"the pattern {shown!r}")
            return entries
    except OSError:
        return []  # unreadable or not a directory: no match, like glob


class _Paths:
    """The paths built so far for one pattern, each checked against PATH_MAX, all of them counted
    against MAX_ARGV_BYTES and the clock."""

    def __init__(self, budget: Budget, shown: str) -> None:
        self.budget, self.shown = budget, shown
        self.what = f"the pattern {shown!r}"
        self.paths: list[str] = []
        self.size = 0

    def add(self, path: str) -> None:
        if len(path) >= PATH_MAX:
            raise PolicyViolation(
                f"{self.what} makes paths longer than {PATH_MAX - 1} bytes, which no file can have"
            )
        self.paths.append(path)
        if len(self.paths) > MAX_MATCHES:
            raise PolicyViolation(f"{self.what} matches more than {MAX_MATCHES} files")
        self.size += len(path) + 1
        if self.size > MAX_ARGV_BYTES:
            raise PolicyViolation(
                f"{self.what} expands to more than {MAX_ARGV_BYTES} bytes of file names; name fewer files"
            )
        if len(self.paths) % TICK == 0:
            self.budget.check_time(self.what)


def _short(shown: str) -> str:
    return shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 1] + "…"


def _join(base: str, tail: str) -> str:
    return os.path.join(base, tail) if base else tail


def bounded_glob(pattern: str, cwd: str, budget: Budget, shown: str) -> list[str]:
    """The paths matching ``pattern`` (relative ones against ``cwd``, returned relative), sorted."""
    shown = _short(shown)
    what = f"the pattern {shown!r}"
    budget.check_time(what)
    absolute = pattern.startswith("/")
    parts = pattern.split("/")
    if absolute:
        parts = parts[1:]
    current = ["/"] if absolute else [""]
    n = 0
    while n < len(parts):
        part = parts[n]
        if not has_magic(part):
            # A run of plain parts is joined once, then onto each path so far.
            tail = ""
            while n < len(parts) and not has_magic(parts[n]):
                tail = _join(tail, parts[n])
                n += 1
                if len(tail) >= PATH_MAX:
                    break  # too long already: _Paths.add refuses it
            joined = _Paths(budget, shown)
            for c in current:
                joined.add(_join(c, tail))
            current = joined.paths
            continue
        n += 1
        if len(part) > PATH_MAX:
            raise PolicyViolation(f"{what} has a part longer than {PATH_MAX} characters")
        regex = re.compile(fnmatch.translate(part))
        budget.check_time(what)
        hidden_ok = part.startswith(".")
        found = _Paths(budget, shown)
        for base in current:
            for entry in _list(os.path.join(cwd, base) if base else cwd, budget, shown):
                name = entry.name
                if (name.startswith(".") and not hidden_ok) or not regex.match(name):
                    continue
                if n < len(parts):
                    try:
                        if not entry.is_dir():
                            continue
                    except OSError:
                        continue
                found.add(_join(base, name))
        current = found.paths
        if not current:
            return []
    if parts and not has_magic(parts[-1]):
        # A plain last part: only the paths that exist (a trailing "/": only the folders).
        keep = os.path.isdir if parts[-1] == "" else os.path.lexists
        kept = []
        for i, c in enumerate(current, 1):
            if keep(os.path.join(cwd, c)):
                kept.append(c)
            if i % TICK == 0:
                budget.spend(TICK, what)
        current = kept
    return sorted(current)
