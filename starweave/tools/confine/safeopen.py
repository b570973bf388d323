"""The only ways Starweave itself opens files for the shell tools and the file server.

Starweave runs outside any sandbox, so a file it opens on the model's behalf must be exactly the file
the policy checked, and an ordinary one: never a FIFO (which would hang the check), a device (a tape
that rewinds, a disk, ``/dev/zero`` read forever) or a socket, and never a file reached through a
symlink swapped in after the check. Reads open the checked path with ``O_PATH | O_NOFOLLOW`` first
(which opens nothing for real), verify its type, reopen that very inode through ``/proc/self/fd`` and
compare the kernel's name for it with the checked path. Writes walk the path below the workspace one
component at a time with ``O_NOFOLLOW`` and do the same checks before anything is truncated.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat

from starweave.errors import PolicyViolation

# Devices a *tool* may be handed (reading zeros or random bytes, discarding output). Starweave never
# opens one of them itself for reading: it parses what it reads.
TOOL_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"})


def fd_path(fd: int) -> str:
    """The kernel's name for an open descriptor. Without /proc this stays "/proc/self/fd/N", which
    is inside no workspace, so the checks that use it fail closed."""
    return os.path.realpath(f"/proc/self/fd/{fd}")


def describe_mode(mode: int) -> str:
    """A word for a file type: "a FIFO", "a character device" ..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _is_devnull(st: os.stat_result) -> bool:
    null = os.stat(os.devnull)
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev


def open_checked_read(real: str, *, allow_devnull: bool = True) -> int:
    """Open the already checked, fully resolved path ``real`` for reading and return a blocking,
    close-on-exec descriptor. Refuses (PolicyViolation) anything but a regular file (or /dev/null)
    and a path that changed since the check; OSError for the rest (missing file, permissions)."""
    pfd = os.open(real, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(pfd)
        if not stat.S_ISREG(st.st_mode) and not (allow_devnull and _is_devnull(st)):
            raise PolicyViolation(
                f"{real} is {describe_mode(st.st_mode)}; only regular files may be read here"
            )
        fd = os.open(f"/proc/self/fd/{pfd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    finally:
        os.close(pfd)
    try:
        if fd_path(fd) != real and not _is_devnull(os.fstat(fd)):
            raise PolicyViolation(f"reading {real} refused: the path changed after the check")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_checked(real: str, cap: int, what: str) -> bytes:
    """The content of the regular file ``real`` (already checked), refused when larger than ``cap``
    bytes: what Starweave parses itself (sed and awk scripts, git configs) is small."""
    fd = open_checked_read(real, allow_devnull=True)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise PolicyViolation(f"{what} {real} is larger than {cap} bytes, too large to check")
    return data


def _open_dir_below(parent: int, name: str, shown: str) -> int:
    """Open (creating it if missing) the directory ``name`` under the descriptor ``parent``
    without following a symlink."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=parent)
    try:
        return os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(f"{fd_path(parent)}/{name}"):
            raise PolicyViolation(
                f"write outside the workspace refused: a folder of {shown} became a symlink after the check"
            ) from exc
        raise


def _open_last(dir_fd: int, name: str, flags: int, shown: str) -> int:
    """Open the last component: create a new regular file, or reopen an existing one only when it
    is a regular file (never a symlink, FIFO, device or socket)."""
    try:
        return os.open(name, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dir_fd)
    except FileExistsError:
        pass
    pfd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(pfd)
        if stat.S_ISLNK(st.st_mode):
            raise PolicyViolation(
                f"write outside the workspace refused: {shown} became a symlink after the check"
            )
        if not stat.S_ISREG(st.st_mode):
            raise PolicyViolation(f"writing {shown} is refused: it is {describe_mode(st.st_mode)}")
        return os.open(f"/proc/self/fd/{pfd}", flags & ~os.O_CREAT)
    finally:
        os.close(pfd)


def _open_confined(path: str, flags: int, workspace: str) -> int:
    if not path.startswith(workspace.rstrip("/") + "/"):
        raise PolicyViolation(f"write outside the workspace: {path} is not a file below {workspace}")
    parts = os.path.relpath(path, workspace).split("/")
    # check_write resolved every symlink, so below the workspace the path has none: walking it
    # component by component with O_NOFOLLOW refuses any symlink swapped in since the check.
    dir_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if fd_path(dir_fd) != workspace:
            raise PolicyViolation(f"write refused: the workspace {workspace} was replaced by a symlink")
        for name in parts[:-1]:
            next_fd = _open_dir_below(dir_fd, name, path)
            os.close(dir_fd)
            dir_fd = next_fd
        return _open_last(dir_fd, parts[-1], flags, path)
    finally:
        os.close(dir_fd)


def open_for_write(path: str, *, append: bool, workspace: str | None) -> int:
    """Open ``path`` for writing and return a blocking, close-on-exec descriptor; missing parent
    folders are created. Truncates unless ``append``.

    ``path`` must already have passed :meth:`PathGuard.check_write` (so it is a resolved path).
    With ``workspace`` set the open is confined to it even if the tree changes after that check: no
    folder below the workspace may have become a symlink, only a regular file is opened (never a
    FIFO, device or socket), the opened file's real path is checked again through ``/proc/self/fd``,
    and a file with other hard links is refused before anything is truncated. ``workspace=None``
    (unrestricted mode) and ``/dev/null`` open ``path`` as given. Raises PolicyViolation when the
    write would leave the workspace or hit a special file, OSError for the rest.
    """
    # O_NONBLOCK so a FIFO without a reader fails instead of hanging; O_TRUNC only after the checks.
    flags = os.O_WRONLY | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_APPEND if append else 0)
    if path == os.devnull or workspace is None:
        if path != os.devnull:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, flags | os.O_CREAT, 0o644)
    else:
        fd = _open_confined(path, flags, workspace)
    try:
        st = os.fstat(fd)
        if workspace is not None and path != os.devnull:
            real = fd_path(fd)
            if not real.startswith(workspace.rstrip("/") + "/"):
                raise PolicyViolation(f"write outside the workspace: {path} now resolves to {real}")
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                raise PolicyViolation(
                    f"writing {path} is refused: the file has other hard links, which may be outside "
                    "the workspace"
                )
        if stat.S_ISREG(st.st_mode) and not append:
            os.ftruncate(fd, 0)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd
