"""Workspace files that share their data with a file outside the workspace (a hard link someone
placed there), made separate before a sandboxed command runs.

A hard link is the outside file itself under a second name: a sandbox that lets commands write in
the workspace lets them write that file too. A command cannot make such a link (a link never
crosses a mount, and Landlock refuses one between hierarchies), so only what was placed from
outside matters. Before each command, every regular file of the workspace with more links than
the workspace holds is replaced by a copy of itself (same data, mode, owner and times): the outside
file keeps its content and no longer changes with the workspace's. The workspace is watched with
:mod:`.folder_watch`, so a command costs one stat per folder, not per file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import stat
import threading
from dataclasses import dataclass

from starweave.tools.confine.folder_watch import FolderWatch

logger = logging.getLogger(__name__)

WATCH_BUDGET = 2_000_000  # entries walked in the workspace
WATCH_SECONDS = 60.0


@dataclass(frozen=True)
class Linked:
    """A regular file of the workspace that had more than one link when its folder was listed."""

    path: str
    dev: int
    ino: int


def _pick(entry: os.DirEntry[str]) -> Linked | None:
    if not entry.is_file(follow_symlinks=False):
        return None
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return Linked(entry.path, st.st_dev, st.st_ino) if st.st_nlink > 1 else None


def _descend(entry: os.DirEntry[str]) -> bool:
    return True


def detach(path: str, dev: int, ino: int) -> bool:
    """Replace ``path`` (still the file ``dev``/``ino``) by a copy of itself; False when it is gone
    or no longer that file."""
    parent, name = os.path.split(path)
    dir_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        try:
            src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return False
        with os.fdopen(src, "rb") as reader:
            st = os.fstat(src)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (dev, ino):
                return False
            temp = f".starweave-detach-{secrets.token_hex(6)}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            dst = os.open(temp, flags, 0o600, dir_fd=dir_fd)
            try:
                with os.fdopen(dst, "wb") as writer:
                    shutil.copyfileobj(reader, writer)
                    if os.geteuid() == 0:
                        os.fchown(writer.fileno(), st.st_uid, st.st_gid)
                    os.fchmod(writer.fileno(), stat.S_IMODE(st.st_mode))
                    os.utime(writer.fileno(), ns=(st.st_atime_ns, st.st_mtime_ns))
                os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
        return True
    finally:
        os.close(dir_fd)


class OutsideLinks:
    """The hard-linked files of one workspace, kept current between commands."""

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace
        self._watch: FolderWatch[Linked] | None = None
        self._lock = threading.Lock()

    def linked(self) -> list[Linked]:
        """The workspace's files that had other links when their folder was last listed."""
        with self._lock:
            if self._watch is None:
                self._watch = FolderWatch([self.workspace], _pick, _descend, WATCH_BUDGET, WATCH_SECONDS)
                if not self._watch.complete:
                    logger.warning(
                        "the workspace %s is too big to search for hard links in %gs: files beyond "
                        "the search are not checked",
                        self.workspace,
                        WATCH_SECONDS,
                    )
            else:
                self._watch.refresh()
            return self._watch.found()

    def detach_outside(self) -> list[str]:
        """Copy every file whose links are not all in the workspace; the paths copied. Blocking;
        raises OSError (its filename set) when a file cannot be separated."""
        groups: dict[tuple[int, int], list[str]] = {}
        for item in self.linked():
            groups.setdefault((item.dev, item.ino), []).append(item.path)
        copied = []
        for (dev, ino), paths in groups.items():
            try:
                st = os.stat(paths[0], follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) != (dev, ino) or st.st_nlink <= len(paths):
                continue  # every link is in the workspace (or the file changed: listed again next time)
            for path in paths:
                try:
                    if detach(path, dev, ino):
                        copied.append(path)
                except OSError as exc:
                    raise OSError(exc.errno, exc.strerror, path) from exc
        return copied
