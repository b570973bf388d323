"""What the LinuxAgent sees of the folder it works in, so that the model never has to guess where
things are: before its first step, the workspace (names and sizes, a few levels deep, bounded);
after a call that failed, the folder the next command starts in.

The listing is a command like any other, run through the device's shell in its sandbox: it shows
what the model's commands would see, and gives no view the sandbox does not.
"""

from __future__ import annotations

import shlex
from typing import Any

from starweave.commands import Command, Result

SHELL_TOOL = "execute_command"
TREE_DEPTH = 3  # levels of the workspace shown before the first step
AFTER_FAILURE_DEPTH = 1
MAX_SHOWN = 40  # entries shown; the shallowest first, then in name order
MAX_READ = 2000  # entries read from find (its output is cut there)
LOOK_TIMEOUT = 15


def _find_pattern(path: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in path)


def listing_command(depth: int = TREE_DEPTH, skip: str = "") -> str:
    """A bash line printing ``kind<TAB>size<TAB>path`` for every entry of the current folder,
    ``depth`` levels deep, at most MAX_READ lines; the absolute folder ``skip`` (the run's own log
    folder) is left out."""
    prune = f"-path {shlex.quote(_find_pattern(skip))} -prune -o " if skip else ""
    return (
        f"find \"$PWD\" -mindepth 1 -maxdepth {depth} {prune}-printf '%y\\t%s\\t%P\\n' "
        f"2>/dev/null | head -n {MAX_READ}"
    )


def _size(size: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def folder_view(raw: str, where: str, depth: int) -> str:
    """The lines of :func:`listing_command`'s output as the model reads them: folders with a
    trailing ``/``, files with their size, the shallowest MAX_SHOWN entries in name order."""
    entries: list[tuple[str, int, str]] = []
    for line in raw.splitlines():
        kind, _, rest = line.partition("\t")
        digits, _, path = rest.partition("\t")
        if path and digits.isdigit():
            entries.append((kind, int(digits), path))
    levels = "" if depth == 1 else f", {depth} levels deep"
    if not entries:
        return f"The folder {where} is empty."
    chosen = sorted(entries, key=lambda e: (e[2].count("/"), e[2]))[:MAX_SHOWN]
    lines = []
    for kind, size, path in sorted(chosen, key=lambda e: e[2]):
        if kind == "d":
            lines.append(f"{path}/")
        elif kind == "f":
            lines.append(f"{path}  {_size(size)}")
        elif kind == "l":
            lines.append(f"{path}  (symlink)")
        else:
            lines.append(f"{path}  (special file)")
    counted = f"{len(entries)}+" if len(entries) >= MAX_READ else str(len(entries))
    more = f"\n… and {len(entries) - len(chosen)} more" if len(entries) > len(chosen) else ""
    noun = "entry" if counted == "1" else "entries"
    return f"The folder {where} holds ({counted} {noun}{levels}):\n" + "\n".join(lines) + more


async def look(dispatcher: Any, where: str, depth: int = TREE_DEPTH, skip: str = "") -> str:
    """The view of the shell's current folder (``where`` says which it is to the model) through
    the device's shell, or "" when it could not be listed."""
    command = Command(
        tool_name=SHELL_TOOL,
        parameters={"command": listing_command(depth, skip), "timeout": LOOK_TIMEOUT},
        tool_type="action",
    )
    results: list[Result] = list(await dispatcher.execute_commands([command], timeout=LOOK_TIMEOUT) or [])
    if not results or not results[0].ok or not isinstance(results[0].result, dict):
        return ""
    return folder_view(str(results[0].result.get("stdout") or ""), where, depth)


def has_shell(tools: list[dict[str, Any]]) -> bool:
    """Whether the device offers the shell tool the listing runs through."""
    return any(tool.get("name") == SHELL_TOOL for tool in tools)
