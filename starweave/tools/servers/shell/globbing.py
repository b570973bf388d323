"""Glob expansion with a budget: the same matches as :func:`glob.glob` (``*``, ``?`` and ``[...]``
per path component, hidden names only for patterns that start with a dot, no ``**`` recursion),
but every directory entry read is counted, so ``echo /*/*/*/*/*/*/*/*`` is refused after a bounded
amount of work instead of walking /proc for minutes."""

from __future__ import annotations

import fnmatch
import os
import re

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.budget import Budget

MAGIC = re.compile(r"[*?\[]")
MAX_MATCHES = 10_000


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


def bounded_glob(pattern: str, cwd: str, budget: Budget, shown: str) -> list[str]:
    """The paths matching ``pattern`` (relative ones against ``cwd``, returned relative), sorted."""
    absolute = pattern.startswith("/")
    parts = pattern.split("/")
    if absolute:
        parts = parts[1:]
    current = ["/"] if absolute else [""]
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        if not has_magic(part):
            current = [os.path.join(c, part) if c else part for c in current]
            if part == "" and last:
                current = [c for c in current if os.path.isdir(os.path.join(cwd, c))]
            continue
        regex = re.compile(fnmatch.translate(part))
        hidden_ok = part.startswith(".")
        found: list[str] = []
        for base in current:
            for entry in _list(os.path.join(cwd, base) if base else cwd, budget, shown):
                name = entry.name
                if (name.startswith(".") and not hidden_ok) or not regex.match(name):
                    continue
                if not last:
                    try:
                        if not entry.is_dir():
                            continue
                    except OSError:
                        continue
                found.append(os.path.join(base, name) if base else name)
                if len(found) > MAX_MATCHES:
                    raise PolicyViolation(f"the pattern {shown!r} matches more than {MAX_MATCHES} files")
        current = found
        if not current:
            return []
    if parts and not has_magic(parts[-1]) and parts[-1]:
        current = [c for c in current if os.path.lexists(os.path.join(cwd, c))]
    return sorted(current)
