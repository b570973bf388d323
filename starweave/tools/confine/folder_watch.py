"""A walked tree whose findings stay current: each folder is listed again only when its
modification time moved.

Adding, removing or renaming an entry changes its folder's modification time, so a refresh stats
every folder it knows (no listing) and lists again only the changed ones, walking the new
subfolders they hold. File systems stamp times with a coarse clock: a folder changed in the same
tick as its listing keeps its time, so a folder modified less than RACY_NS before it was listed is
listed again at every refresh until its time has settled (git's "racily clean" index rule).
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
RACY_NS = 2_000_000_000  # coarser than any timestamp granularity Linux file systems use but FAT's


@dataclass
class _Folder(Generic[T]):
    mtime_ns: int
    listed_ns: int
    found: list[T] = field(default_factory=list)
    subfolders: list[str] = field(default_factory=list)
    entries: int = 0


class FolderWatch(Generic[T]):
    """The findings of a breadth-first walk of ``roots``: ``pick`` turns an entry into a finding
    (or None), ``descend`` says whether to walk into a folder entry (symlinks never are). A walk
    stops after ``budget`` entries or ``seconds`` seconds (logged); what it did not reach is not
    watched. Not thread-safe: the caller holds a lock."""

    def __init__(
        self,
        roots: Iterable[str],
        pick: Callable[[os.DirEntry[str]], T | None],
        descend: Callable[[os.DirEntry[str]], bool],
        budget: int,
        seconds: float,
    ) -> None:
        self.pick, self.descend = pick, descend
        self.budget, self.seconds = budget, seconds
        self._folders: dict[str, _Folder[T]] = {}
        self.complete = self._walk(list(roots))

    def found(self) -> list[T]:
        """Every finding of the folders watched, as of the last walk or refresh."""
        return [item for folder in self._folders.values() for item in folder.found]

    def refresh(self) -> None:
        """List again every folder whose modification time moved (or that was racy), and walk
        the subfolders that appeared; forget the folders that went away."""
        new: list[str] = []
        for path in list(self._folders):
            folder = self._folders.get(path)
            if folder is None:  # forgotten with a parent meanwhile
                continue
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                self._forget(path)
                continue
            if not stat.S_ISDIR(st.st_mode):
                self._forget(path)
                continue
            if st.st_mtime_ns == folder.mtime_ns and folder.listed_ns - folder.mtime_ns >= RACY_NS:
                continue
            before = set(folder.subfolders)
            listed = self._list(path, st)
            if listed is None:
                self._forget(path)
                continue
            self._folders[path] = listed
            for gone in before - set(listed.subfolders):
                self._forget(gone)
            new += [p for p in listed.subfolders if p not in self._folders]
        if new:
            self._walk(new)

    def _list(self, path: str, st: os.stat_result) -> _Folder[T] | None:
        # The time is read before the listing: a change during it shows as a later time next refresh.
        listed = _Folder[T](st.st_mtime_ns, time.time_ns())
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    listed.entries += 1
                    item = self.pick(entry)
                    if item is not None:
                        listed.found.append(item)
                    elif entry.is_dir(follow_symlinks=False) and self.descend(entry):
                        listed.subfolders.append(entry.path)
        except OSError:
            return None
        return listed

    def _walk(self, queue: list[str]) -> bool:
        deadline = time.monotonic() + self.seconds
        seen = 0
        while queue and seen < self.budget and time.monotonic() < deadline:
            path = queue.pop(0)
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            listed = self._list(path, st) if stat.S_ISDIR(st.st_mode) else None
            if listed is None:
                continue
            self._folders[path] = listed
            seen += listed.entries
            queue += [p for p in listed.subfolders if p not in self._folders]
        if queue:
            logger.info("walk stopped after %d entries; %d folders not searched", seen, len(queue))
        return not queue

    def _forget(self, path: str) -> None:
        folder = self._folders.pop(path, None)
        if folder is not None:
            for sub in folder.subfolders:
                self._forget(sub)
