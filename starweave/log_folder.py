"""The log folder as one open directory, so a model cannot steer Starweave's own writes.

By default a run's logs go to ``./logs/<task>/`` and a run's workspace is ``.``, so the log folder
lies in the workspace, where the model's commands may create symlinks, FIFOs or devices, even while
the run goes on (the task name is listed in ``logs/``). Starweave writes its logs unconfined (as
root, often), so:

- the folder is created by a walk that never follows a symlink inside a workspace an agent has had
  (``config.known_workspaces``); a user's own symlinks elsewhere on the path are followed;
- it is then held open, and every log file is opened relative to that descriptor, without following
  a symlink, and only when it is a regular file: a folder swapped for a symlink later, or a file
  planted under a log file's name, cannot redirect or hang a write;
- whole files (``result.json``, ``output.md``) are written to a temporary name and renamed, which
  replaces whatever the model put there instead of writing through it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import weakref
from pathlib import Path

from starweave.config.known_workspaces import remembered_workspaces
from starweave.errors import ConfigError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _inside(path: str, folders: list[Path]) -> Path | None:
    return next((folder for folder in folders if Path(path).is_relative_to(folder)), None)


def _real(dir_fd: int) -> str:
    return os.path.realpath(f"/proc/self/fd/{dir_fd}")


def open_folder(path: Path, create: bool = True) -> int:
    """Create ``path`` (absolute) as needed and return a descriptor of it; ConfigError when the path
    goes through a symlink inside a workspace, OSError for the rest (FileNotFoundError for a missing
    folder when not ``create``)."""
    workspaces = remembered_workspaces()
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in Path(os.path.abspath(path)).parts[1:]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
            try:
                next_fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                where = f"{_real(fd).rstrip('/')}/{name}"
                workspace = _inside(where, workspaces)
                if workspace is not None and os.path.islink(where):
                    raise ConfigError(
                        f"the log folder {path} goes through {where}, a symlink inside the workspace "
                        f"{workspace}, where a model may have put it; remove it or pass --log-dir with "
                        "another folder"
                    ) from None
                next_fd = os.open(name, _DIR_FLAGS, dir_fd=fd)  # the user's own symlink
            os.close(fd)
            fd = next_fd
        return fd
    except BaseException:
        os.close(fd)
        raise


class LogFolder:
    """One log folder, held open: files are created, appended to and replaced relative to it."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        self.fd = open_folder(path, create)
        self._closer = weakref.finalize(self, os.close, self.fd)

    def close(self) -> None:
        """Release the folder's descriptor."""
        self._closer()

    def _open_regular(self, name: str, flags: int) -> int:
        """Open the regular file ``name``; anything else under that name (a symlink, a FIFO ...) is
        not Starweave's log and is removed first. O_NONBLOCK: a FIFO fails at once instead of hanging."""
        flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for _ in range(3):
            try:
                fd = os.open(name, flags, 0o644, dir_fd=self.fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENXIO):
                    raise
            else:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    return fd
                os.close(fd)
            os.unlink(name, dir_fd=self.fd)
        raise OSError(errno.EAGAIN, f"{name} in the log folder {self.path} keeps being replaced")

    def append(self, name: str, data: bytes) -> None:
        """Append ``data`` to the regular file ``name`` (created when missing)."""
        fd = self._open_regular(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def replace(self, name: str, data: bytes) -> Path:
        """Write ``name`` whole: to a fresh temporary file, then renamed over whatever was there."""
        tmp = f".{name}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=self.fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o644, dir_fd=self.fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        return self.path / name

    def read(self, name: str) -> bytes | None:
        """The content of the regular file ``name``, or None when it does not exist."""
        try:
            fd = self._open_regular(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as handle:
            return handle.read()


def write_log_file(path: Path, data: bytes) -> Path:
    """Write ``data`` as the file ``path`` in a log folder (screenshots, UI trees), creating the folder
    as :class:`LogFolder` does: no symlink inside a workspace is followed, and whatever the model put
    under that name is replaced. Blocking: call it on a worker thread."""
    folder = LogFolder(path.parent)
    try:
        return folder.replace(path.name, data)
    finally:
        folder.close()


def read_log_file(path: Path) -> bytes:
    """The content of the regular file ``path`` in a log folder (a screenshot written before); a link
    or FIFO planted under its name is never read. Blocking: call it on a worker thread."""
    folder = LogFolder(path.parent, create=False)
    try:
        data = folder.read(path.name)
    finally:
        folder.close()
    if data is None:
        raise FileNotFoundError(errno.ENOENT, "no such file in the log folder", str(path))
    return data
