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
  replaces whatever the model put there instead of writing through it;
- a folder the model broke is repaired, once per write, so the run keeps its logs: a folder removed
  (``rm -rf``) is made again by the same walk (a symlink planted in its place is still refused), a
  folder planted under a log file's name is removed or moved aside, and a folder of Starweave's
  whose rights were taken away (``chmod 000``) gets its owner's rights back. A write that still
  fails raises :class:`LogWriteError`, an OSError.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from starweave.config.known_workspaces import remembered_workspaces
from starweave.errors import ConfigError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# A handle on a folder that reads nothing, so a folder without rights can still be named; with
# O_NOFOLLOW and O_DIRECTORY a symlink there is refused, never followed.
_PATH_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A write is tried again after each repair; a folder broken in more ways than this is given up.
_REPAIRS = 3

T = TypeVar("T")


class LogWriteError(OSError):
    """A log file that could not be written (or read) even after the log folder was repaired. An
    OSError, so whatever handles a failed write already handles it; its message names the file."""

    def __str__(self) -> str:
        return str(self.strerror)


def _inside(path: str, folders: list[Path]) -> Path | None:
    return next((folder for folder in folders if Path(path).is_relative_to(folder)), None)


def _real(dir_fd: int) -> str:
    return os.path.realpath(f"/proc/self/fd/{dir_fd}")


def _give_rights_back(fd: int) -> bool:
    """Give the folder ``fd`` (any descriptor of it, O_PATH included) its owner's rights back when
    this process owns it, as after a model's ``chmod 000``; whether it did. Through /proc, because
    fchmod refuses an O_PATH descriptor; the descriptor names the folder itself, never a link."""
    info = os.fstat(fd)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        return False  # not Starweave's: its permissions stand
    if stat.S_IMODE(info.st_mode) & stat.S_IRWXU == stat.S_IRWXU:
        return False  # the rights are there: the refusal is for another reason
    os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
    return True


def _repair_child(dir_fd: int, name: str) -> bool:
    """Give the folder ``name`` in ``dir_fd`` its owner's rights back (see :func:`_give_rights_back`);
    whether it did. False for a symlink there, which is never followed."""
    try:
        fd = os.open(name, _PATH_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            return False  # not a folder (a symlink is refused by the walk itself)
        raise
    try:
        return _give_rights_back(fd)
    finally:
        os.close(fd)


def _make(dir_fd: int, name: str, repair: bool) -> None:
    """Create the folder ``name`` in ``dir_fd`` unless something is there already."""
    try:
        os.mkdir(name, 0o755, dir_fd=dir_fd)
    except FileExistsError:
        return
    except PermissionError:
        if not (repair and _give_rights_back(dir_fd)):
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=dir_fd)


def open_folder(path: Path, create: bool = True, repair: bool = False) -> int:
    """Create ``path`` (absolute) as needed and return a descriptor of it; ConfigError when the path
    goes through a symlink inside a workspace, OSError for the rest (FileNotFoundError for a missing
    folder when not ``create``). With ``repair``, a folder on the way that this process owns but may
    not enter (a model's ``chmod 000``) gets its owner's rights back."""
    workspaces = remembered_workspaces()
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in Path(os.path.abspath(path)).parts[1:]:
            if create:
                _make(fd, name, repair)
            try:
                try:
                    next_fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                except PermissionError:
                    # Either this folder may not be searched, or the next one not opened.
                    if not (repair and (_give_rights_back(fd) or _repair_child(fd, name))):
                        raise
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
    """One log folder, held open: files are created, appended to and replaced relative to it.

    Every write repairs what a model may have broken and is tried again (see the module's
    docstring); one that still fails raises :class:`LogWriteError`. Safe to use from several
    threads: a repair swaps the held descriptor.
    """

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        self.create = create
        self._lock = threading.RLock()
        self.fd = open_folder(path, create, repair=True)
        self._closer = weakref.finalize(self, os.close, self.fd)

    def close(self) -> None:
        """Release the folder's descriptor."""
        self._closer()

    def _reopen(self) -> None:
        """Hold the folder at ``self.path`` again (made again when ``create``), by the same walk as at
        first: a symlink planted in a workspace where the folder was is refused (ConfigError)."""
        fd = open_folder(self.path, self.create, repair=True)
        self._closer()
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, self.fd)

    def _repair(self, exc: OSError) -> bool:
        """Mend what ``exc`` says is wrong with the folder itself; whether trying again may succeed."""
        if exc.errno == errno.ENOENT and os.fstat(self.fd).st_nlink == 0:
            self._reopen()  # the held folder was removed: every name in it is missing
            return True
        if exc.errno == errno.EACCES:
            return _give_rights_back(self.fd)
        return False

    def _retrying(self, name: str, action: Callable[[], T]) -> T:
        """``action()``, tried again after each repair of the folder; LogWriteError when it fails and
        nothing more can be mended."""
        with self._lock:
            for _ in range(_REPAIRS):
                try:
                    return action()
                except OSError as exc:
                    failure = exc
                try:
                    if not self._repair(failure):
                        break
                except (OSError, ConfigError) as exc:
                    raise self._failed(name, exc) from exc
            raise self._failed(name, failure) from failure

    def _failed(self, name: str, exc: OSError | ConfigError) -> LogWriteError:
        """The one error of a failed write: its errno (ELOOP for a refused symlink) and a line
        naming the file, the folder and why."""
        if isinstance(exc, OSError):
            code, reason = exc.errno, exc.strerror or str(exc)
        else:
            code, reason = errno.ELOOP, str(exc)
        return LogWriteError(code, f"cannot use {name} in the log folder {self.path}: {reason}")

    def _clear(self, name: str) -> None:
        """Take away what is under ``name`` (it is not Starweave's log): a file, link, FIFO ... is
        removed, a folder too when empty; a folder with something in it is renamed aside, within the
        log folder, to a name that says why, so nothing the model put there is lost."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return  # gone already: the name is free, as wanted
        except IsADirectoryError:  # Linux's answer to unlinking a folder
            try:
                os.rmdir(name, dir_fd=self.fd)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                aside = f".{name}.not-a-log-{secrets.token_hex(4)}"
                os.rename(name, aside, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def _open_regular(self, name: str, flags: int) -> int:
        """Open the regular file ``name``; anything else under that name (a symlink, a FIFO, a
        folder ...) is not Starweave's log and is taken away first (:meth:`_clear`). O_NONBLOCK: a
        FIFO fails at once instead of hanging."""
        flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for _ in range(3):
            try:
                fd = os.open(name, flags, 0o644, dir_fd=self.fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                    raise
            else:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    return fd
                os.close(fd)
            self._clear(name)
        raise OSError(errno.EAGAIN, f"{name} in the log folder {self.path} keeps being replaced")

    def append(self, name: str, data: bytes) -> None:
        """Append ``data`` to the regular file ``name`` (created when missing)."""
        self._retrying(name, lambda: self._append(name, data))

    def _append(self, name: str, data: bytes) -> None:
        fd = self._open_regular(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def replace(self, name: str, data: bytes) -> Path:
        """Write ``name`` whole: to a fresh temporary file, then renamed over whatever was there."""
        return self._retrying(name, lambda: self._replace(name, data))

    def _replace(self, name: str, data: bytes) -> Path:
        tmp = f".{name}.{os.getpid()}.tmp"
        self._clear(tmp)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o644, dir_fd=self.fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        try:
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as exc:
            # A folder under the name (EISDIR; ENOTEMPTY/EEXIST when a folder is renamed over one)
            if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise
            self._clear(name)
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        return self.path / name

    def read(self, name: str) -> bytes | None:
        """The content of the regular file ``name``, or None when it does not exist."""
        try:
            fd = self._retrying(name, lambda: self._open_regular(name, os.O_RDONLY))
        except LogWriteError as exc:
            if exc.errno == errno.ENOENT:
                return None
            raise
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
