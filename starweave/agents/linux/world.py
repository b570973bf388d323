"""What a run changed in the workspace, as the workspace itself tells: the evidence a FINISH is
checked against.

Before the first step the workspace is listed (names, sizes, modification times; see
``orientation``); when the model finishes, it is listed again. The difference is what the run made,
changed and removed, whatever commands it took and whatever the model says it did. The files among
them are read back (their first lines) through the same sandboxed shell, so that the model's claim
can be held against what the files now hold.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from starweave.agents.linux.orientation import (
    LOOK_TIMEOUT,
    SHELL_TOOL,
    Entry,
    Listing,
    list_folder,
    size_text,
)
from starweave.commands import Command, Result

WORLD_DEPTH = 6  # levels of the workspace compared
MAX_CHANGES = 6  # changed entries shown to the model
MAX_REPORTED = 20  # changed entries reported in a run's result
HEAD_BYTES = 300  # bytes of each changed file read back
_SEPARATOR = "\x1fSTARWEAVE-FILE\x1f"
_COPY = "\x1fCOPY\x1f"
MAX_TWINS = 3  # files of the same size a new file is compared with


@dataclass(frozen=True)
class Change:
    """One entry the run made (``new``), modified (``changed``), deleted (``removed``) or moved
    (``moved``: a new file with the size and time of one removed, ``source`` its old path)."""

    what: str
    entry: Entry
    source: str = ""


def changes(before: Listing, after: Listing) -> list[Change]:
    """What differs between two listings of the same folder, in path order. A folder whose only
    difference is its time (an entry inside it came or went) is not a change of its own."""
    old = {e.path: e for e in before.entries}
    new = {e.path: e for e in after.entries}
    found: list[Change] = []
    for path in sorted(old.keys() | new.keys()):
        was, now = old.get(path), new.get(path)
        if was is None and now is not None:
            found.append(Change("new", now))
        elif now is None and was is not None:
            found.append(Change("removed", was))
        elif was is not None and now is not None and now.kind != "d" and was != now:
            found.append(Change("changed", now))
    return _paired_moves(found)


def _paired_moves(found: list[Change]) -> list[Change]:
    # mv keeps a file's size and time: a new file matching a removed one is that file, moved.
    removed: dict[tuple[int, str], list[Change]] = {}
    for change in found:
        if change.what == "removed" and change.entry.kind == "f":
            removed.setdefault((change.entry.size, change.entry.mtime), []).append(change)
    paired: list[Change] = []
    used: set[str] = set()
    for change in found:
        sources = removed.get((change.entry.size, change.entry.mtime)) if change.what == "new" else None
        if sources and change.entry.kind == "f":
            source = sources.pop(0)
            paired.append(Change("moved", change.entry, source.entry.path))
            used.add(source.entry.path)
        else:
            paired.append(change)
    return [c for c in paired if not (c.what == "removed" and c.entry.path in used)]


async def snapshot(dispatcher: Any, skip: str = "", root: str = "") -> Listing | None:
    """The workspace as compared at a FINISH: ``root`` (default the shell's current folder)
    WORLD_DEPTH levels deep, without the run's own log folder ``skip``."""
    return await list_folder(dispatcher, WORLD_DEPTH, skip, root)


def heads_command(root: str, paths: list[str], twins: dict[str, list[str]] | None = None) -> str:
    """A bash line printing, for each of ``paths`` (relative to ``root``), a separator line naming
    it, the name of the first of its ``twins`` (files of the same size from before the run) with
    the same bytes, and its first HEAD_BYTES bytes."""
    base = root.rstrip("/") + "/"
    parts = []
    for path in paths:
        full = shlex.quote(base + path)
        same = "".join(
            f"cmp -s -- {full} {shlex.quote(base + twin)} && printf '%s\\n' {shlex.quote(_COPY + twin)} || "
            for twin in (twins or {}).get(path, [])[:MAX_TWINS]
        )
        parts.append(
            f"printf '%s%s\\n' {shlex.quote(_SEPARATOR)} {shlex.quote(path)}; {same}printf '%s\\n' "
            f"{shlex.quote(_COPY)}; head -c {HEAD_BYTES} -- {full} 2>&1"
        )
    return "; ".join(parts)


@dataclass(frozen=True)
class Head:
    """What a changed file begins with, and the file from before the run it is a copy of ("")."""

    text: str
    copy_of: str = ""


def parse_heads(raw: str) -> dict[str, Head]:
    """The output of :func:`heads_command` as path -> Head."""
    heads: dict[str, Head] = {}
    for chunk in raw.split(_SEPARATOR)[1:]:
        path, _, rest = chunk.partition("\n")
        marker, _, text = rest.partition("\n")
        heads[path] = Head(text, marker[len(_COPY) :] if marker.startswith(_COPY) else "")
    return heads


async def read_heads(
    dispatcher: Any, root: str, paths: list[str], twins: dict[str, list[str]] | None = None
) -> dict[str, Head]:
    """The heads of the files ``paths`` through the device's shell ({} if it failed)."""
    if not paths:
        return {}
    command = Command(
        tool_name=SHELL_TOOL,
        parameters={"command": heads_command(root, paths, twins), "timeout": LOOK_TIMEOUT},
        tool_type="action",
    )
    results: list[Result] = list(await dispatcher.execute_commands([command], timeout=LOOK_TIMEOUT) or [])
    if not results or not isinstance(results[0].result, dict):
        return {}
    return parse_heads(str(results[0].result.get("stdout") or ""))


def twins_of(after: Listing, files: list[Change]) -> dict[str, list[str]]:
    """For each new file, the other files of the same size there are now that the run did not
    make or change (copy candidates: the file may be a copy of one of them)."""
    fresh = {c.entry.path for c in files}
    by_size: dict[int, list[str]] = {}
    for entry in after.entries:
        if entry.kind == "f" and entry.path not in fresh:
            by_size.setdefault(entry.size, []).append(entry.path)
    return {c.entry.path: by_size.get(c.entry.size, []) for c in files if c.what == "new"}


def change_text(change: Change, head: Head | None) -> str:
    """One change as the model reads it: what happened to which entry and, for a file, what it
    now begins with."""
    entry = change.entry
    if change.what == "removed":
        return f"- {entry.path}: removed"
    if change.what == "moved":
        return f"- {entry.path}: moved here from {change.source}"
    if entry.kind == "d":
        return f"- {entry.path}/: new folder"
    label = f"- {entry.path}: {change.what}, {size_text(entry.size)}"
    if entry.kind != "f" or head is None:
        return label
    if head.copy_of:
        return f"{label}, a copy of {head.copy_of}"
    if not head.text:
        return f"{label}, empty"
    if is_binary(head):
        return f"{label}, binary"
    more = " …" if entry.size > len(head.text.encode("utf-8", "replace")) else ""
    return f"{label}, begins:\n{head.text.rstrip()}{more}"


def is_binary(head: Head) -> bool:
    """Whether a file's first bytes are not text (a NUL byte among them)."""
    return "\x00" in head.text


def needs_a_look(head: Head | None, seen: str) -> bool:
    """Whether a changed file's contents are news to the model: not a copy, not binary, and some
    line of its first bytes is in nothing it typed or read (or it is empty)."""
    if head is None or head.copy_of or is_binary(head):
        return False
    lines = [line.strip() for line in head.text.splitlines()]
    if len(head.text.encode("utf-8", "replace")) >= HEAD_BYTES and len(lines) > 1:
        lines = lines[:-1]  # cut in the middle: the last line read is only part of one
    lines = [line for line in lines if line]
    return not lines or any(line not in seen for line in lines)


# A relative file path as people write it in prose: words, dots, slashes, and an extension of 2-8
# characters starting with a letter (out.txt, data/a.csv, ./report.md).
_PATH = re.compile(r"(?<![\w./~-])(?:\./)?[\w-]+(?:[./][\w-]+)*\.[A-Za-z][A-Za-z0-9]{1,7}\b(?!/)")


def file_names(text: str) -> list[str]:
    """The relative file paths ``text`` names, in order, once each (absolute and ~ paths, which
    are not the workspace's, are left out)."""
    return list(dict.fromkeys(m.removeprefix("./") for m in _PATH.findall(text)))


def _holds(listing: Listing, name: str) -> bool:
    tail = "/" + name
    base = name.rsplit("/", 1)[-1]
    return any(
        e.path == name or e.path.endswith(tail) or e.path.rsplit("/", 1)[-1] == base for e in listing.entries
    )


def absent_names(text: str, before: Listing, after: Listing) -> list[str]:
    """The files ``text`` names that the workspace held neither before the run nor after it (a
    file the run removed or moved is not absent: it was there)."""
    return [n for n in file_names(text) if not _holds(after, n) and not _holds(before, n)]


def changes_report(found: list[Change], heads: dict[str, Head]) -> list[dict[str, Any]]:
    """What a run changed, for ``result.json`` and a Galaxy task's result: each entry's path, what
    happened to it, its kind and size, and for a text file its first bytes."""
    report: list[dict[str, Any]] = []
    for change in found[:MAX_REPORTED]:
        entry = change.entry
        item: dict[str, Any] = {
            "path": entry.path,
            "change": change.what,
            "kind": entry.kind,
            "size": entry.size,
        }
        if change.source:
            item["from"] = change.source
        head = heads.get(entry.path)
        if head is not None and head.copy_of:
            item["copy_of"] = head.copy_of
        elif head is not None and not is_binary(head):
            item["head"] = head.text
        report.append(item)
    return report


@dataclass(frozen=True)
class WorldEnd:
    """The workspace as a run leaves it: listed again (``after``), its changes since the first
    listing (``found``) and the first bytes of the files among them (``heads``)."""

    after: Listing
    found: list[Change]
    heads: dict[str, Head]

    def changed_files(self) -> list[Change]:
        """The files the run made or changed, in listing order."""
        return changed_files(self.found)


def changed_files(found: list[Change]) -> list[Change]:
    """The files among ``found`` that were made or changed (not folders, not removed)."""
    return [c for c in found if c.what in ("new", "changed") and c.entry.kind == "f"]


async def read_end(dispatcher: Any, before: Listing, after: Listing) -> WorldEnd:
    """Compare ``after`` with ``before`` and read the heads of the files changed (one look serves
    the FINISH check and the run's evidence)."""
    found = changes(before, after)
    files = changed_files(found)[:MAX_REPORTED]
    heads = await read_heads(dispatcher, before.root, [c.entry.path for c in files], twins_of(after, files))
    return WorldEnd(after, found, heads)


async def run_evidence(
    dispatcher: Any, before: Listing, skip: str, answer: str, end: WorldEnd | None = None
) -> dict[str, Any] | None:
    """What the workspace says about a finished run: the changes (``files``) and the files the
    answer names that were never there (``absent``); None when the workspace could not be read.
    ``end`` is a look already taken after the run's last command (it is listed again otherwise)."""
    if end is None:
        after = await snapshot(dispatcher, skip, before.root)
        if after is None:
            return None
        end = await read_end(dispatcher, before, after)
    return {
        "files": changes_report(end.found, end.heads),
        "absent": absent_names(answer, before, end.after),
        "complete": before.complete and end.after.complete,
    }


EVIDENCE_CHARS = 400
"""An account of a run's workspace (what its files hold now) is cut to this many characters."""
_HEAD_CHARS = 80


def _file_text(item: dict[str, Any]) -> str:
    what = f"{item.get('path')} ({item.get('change')}"
    if item.get("from"):
        what += f" from {item['from']}"
    if item.get("copy_of"):
        what += f", a copy of {item['copy_of']}"
    head = item.get("head")
    if isinstance(head, str):
        text = " ".join(head.split())
        shown = text if len(text) <= _HEAD_CHARS else text[:_HEAD_CHARS] + "..."
        what += f", holds {json.dumps(shown, ensure_ascii=False)}" if text else ", empty"
    return what + ")"


def evidence_text(evidence: Any, limit: int = EVIDENCE_CHARS) -> str:
    """A run's evidence (``files`` and ``absent`` of :func:`run_evidence`, or a result holding
    them) as one line for a reader that must not rely on the agent's claims; "" without any."""
    if not isinstance(evidence, dict) or not isinstance(evidence.get("files"), list):
        return ""
    parts = [_file_text(f) for f in evidence["files"] if isinstance(f, dict)]
    absent = [str(n) for n in evidence.get("absent") or []]
    if absent:
        parts.append(f"named but never there: {', '.join(absent)}")
    text = "; ".join(parts) if parts else "no file changed"
    if len(text) > limit:
        text = text[:limit] + "..."
    return f"the workspace after the run: {text}"
