"""What the LinuxAgent sees of the folder it works in, so that the model never has to guess where
things are: before its first step, the workspace (names and sizes, a few levels deep, bounded);
after a call that failed, the folder the next command starts in.

The listing is a command like any other, run through the device's shell in its sandbox: it shows
what the model's commands would see, and gives no view the sandbox does not.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, replace
from typing import Any

from starweave.commands import Command, Result

SHELL_TOOL = "execute_command"
TREE_DEPTH = 3  # levels of the workspace shown before the first step
AFTER_FAILURE_DEPTH = 1
MAX_SHOWN = 40  # entries shown; the shallowest first, then in name order
MAX_READ = 2000  # entries read from find (its output is cut there)
LOOK_TIMEOUT = 15
ROOT_MARK = "ROOT\t"


@dataclass(frozen=True)
class Entry:
    """One entry of a listing: find's kind letter (f, d, l, ...), size, modification time, path
    relative to the listed folder."""

    kind: str
    size: int
    mtime: str
    path: str


@dataclass(frozen=True)
class Listing:
    """A listed folder (absolute, as the shell saw it) and its entries."""

    root: str
    entries: tuple[Entry, ...]
    complete: bool  # False when find's output was cut at MAX_READ lines


def _find_pattern(path: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in path)


def listing_command(depth: int = TREE_DEPTH, skip: str = "", root: str = "") -> str:
    """A bash line printing the listed folder (``root``, default the current one) on a first
    ``ROOT`` line, then ``kind<TAB>size<TAB>mtime<TAB>path`` for every entry ``depth`` levels deep,
    at most MAX_READ lines; the absolute folder ``skip`` (the run's own log folder) is left out."""
    prune = f"-path {shlex.quote(_find_pattern(skip))} -prune -o " if skip else ""
    where = shlex.quote(root) if root else '"$PWD"'
    return (
        f"printf 'ROOT\\t%s\\n' {where}; find {where} -mindepth 1 -maxdepth {depth} {prune}"
        f"-printf '%y\\t%s\\t%T@\\t%P\\n' 2>/dev/null | head -n {MAX_READ}"
    )


def parse_listing(raw: str) -> Listing:
    """The output of :func:`listing_command` as a Listing."""
    root = ""
    entries: list[Entry] = []
    for line in raw.splitlines():
        if line.startswith(ROOT_MARK):
            root = line[len(ROOT_MARK) :]
            continue
        fields = line.split("\t", 3)
        if len(fields) == 4 and fields[1].isdigit() and fields[3]:
            entries.append(Entry(fields[0], int(fields[1]), fields[2], fields[3]))
    return Listing(root, tuple(entries), len(entries) < MAX_READ)


def size_text(size: int) -> str:
    """A size as people read it: 5 B, 2.9 KB, 1.2 MB."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def entry_text(entry: Entry) -> str:
    """One entry as the model reads it: a folder with a trailing ``/``, a file with its size."""
    if entry.kind == "d":
        return f"{entry.path}/"
    if entry.kind == "f":
        return f"{entry.path}  {size_text(entry.size)}"
    if entry.kind == "l":
        return f"{entry.path}  (symlink)"
    return f"{entry.path}  (special file)"


def folder_view(listing: Listing, where: str, depth: int) -> str:
    """The entries of ``listing`` at most ``depth`` levels deep as the model reads them, the
    shallowest MAX_SHOWN in name order."""
    entries = [e for e in listing.entries if e.path.count("/") < depth]
    levels = "" if depth == 1 else f", {depth} levels deep"
    if not entries:
        return f"The folder {where} is empty."
    chosen = sorted(entries, key=lambda e: (e.path.count("/"), e.path))[:MAX_SHOWN]
    lines = [entry_text(e) for e in sorted(chosen, key=lambda e: e.path)]
    counted = f"{len(entries)}+" if not listing.complete else str(len(entries))
    more = f"\n… and {len(entries) - len(chosen)} more" if len(entries) > len(chosen) else ""
    noun = "entry" if counted == "1" else "entries"
    return f"The folder {where} holds ({counted} {noun}{levels}):\n" + "\n".join(lines) + more


async def list_folder(dispatcher: Any, depth: int, skip: str = "", root: str = "") -> Listing | None:
    """The listing of ``root`` (default the shell's current folder) through the device's shell,
    or None when it could not be listed."""
    command = Command(
        tool_name=SHELL_TOOL,
        parameters={"command": listing_command(depth, skip, root), "timeout": LOOK_TIMEOUT},
        tool_type="action",
    )
    results: list[Result] = list(await dispatcher.execute_commands([command], timeout=LOOK_TIMEOUT) or [])
    if not results or not results[0].ok or not isinstance(results[0].result, dict):
        return None
    return without_log_parents(parse_listing(str(results[0].result.get("stdout") or "")), skip)


def without_log_parents(listing: Listing, skip: str) -> Listing:
    """``listing`` without the folders that hold nothing but the run's own log folder ``skip``
    (``logs/`` on a first run): the model would take them for the user's and write there."""
    if not skip or not listing.root:
        return listing
    rel = os.path.relpath(skip, listing.root)
    if rel.startswith("..") or rel == ".":
        return listing
    parts = rel.split("/")
    parents = {"/".join(parts[:n]) for n in range(1, len(parts))}
    others = [e for e in listing.entries if e.path not in parents]
    kept = {p for p in parents if any(e.path.startswith(p + "/") for e in others)}
    entries = tuple(e for e in listing.entries if e.path not in parents or e.path in kept)
    return replace(listing, entries=entries)


async def look(dispatcher: Any, where: str, depth: int = TREE_DEPTH, skip: str = "") -> str:
    """The view of the shell's current folder (``where`` says which it is to the model), or ""
    when it could not be listed."""
    listing = await list_folder(dispatcher, depth, skip)
    return folder_view(listing, where, depth) if listing is not None else ""


def has_shell(tools: list[dict[str, Any]]) -> bool:
    """Whether the device offers the shell tool the listing runs through."""
    return any(tool.get("name") == SHELL_TOOL for tool in tools)
