"""Path checks shared by the shell policy and the file server.

Every path is resolved against the working directory with symlinks followed (``os.path.realpath``),
so ``..`` and a symlink pointing out of the workspace cannot carry a write outside it. Writes must
land inside the workspace (and never in readonly mode); reads may go anywhere except sensitive
files (keys, credentials, password databases, other processes' environments).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import fnmatch
import os
import re
import stat
from collections.abc import Iterable

from starweave.errors import PolicyViolation

# Special files every mode may write to (the runner maps /dev/stdout and /dev/stderr to the streams).
HARMLESS_WRITE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
SENSITIVE_PREFIXES = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_",
    "/root",
    "/proc/kcore",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/var/lib/sss",
)
SENSITIVE_PROC = re.compile(r"^/proc/[^/]+/(task/[^/]+/)?(environ|mem|auxv)$")
# A path with one of these directory components anywhere is refused.
SENSITIVE_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".azure", ".kube", ".password-store", ".docker"})
SENSITIVE_SUBPATHS = (("/.config/gcloud",), ("/.config/gh",), ("/.local/share/keyrings",))
# File names refused anywhere (fnmatch patterns, matched on the base name).
SENSITIVE_NAMES = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".pypirc",
    ".npmrc",
)
# Files a program may *execute* when it next runs (git config and hooks, shell start-up files):
# writing them inside the workspace would turn a later harmless command into arbitrary code.
PROTECTED_COMPONENTS = frozenset({".git"})
PROTECTED_NAMES = frozenset({".gitconfig", ".bashrc", ".bash_profile", ".profile", ".curlrc", ".wgetrc"})


def is_within(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or below it (both already real, absolute paths)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


class PathGuard:
    """Resolve and check paths for one workspace, mode and set of extra read roots.

    ``mode`` is ``readonly`` or ``workspace``; ``read_roots`` are the directories the file server may
    read besides the workspace.
    """

    def __init__(self, workspace: str, mode: str = "workspace", read_roots: Iterable[str] = ()) -> None:
        if not workspace or not os.path.isabs(workspace):
            raise PolicyViolation(
                f"the workspace must be an absolute path (got {workspace!r}); set SHELL.WORKSPACE"
            )
        self.workspace = os.path.realpath(workspace)
        self.mode = mode
        self.read_roots = [os.path.realpath(os.path.expanduser(r)) for r in read_roots]

    def resolve(self, path: str, cwd: str | None = None) -> str:
        """``path`` made absolute against ``cwd`` (default: the workspace), symlinks resolved."""
        return os.path.realpath(os.path.join(cwd or self.workspace, path))

    def in_workspace(self, real: str) -> bool:
        """True when the resolved path ``real`` is inside the workspace."""
        return is_within(real, self.workspace)

    def sensitive_reason(self, real: str) -> str | None:
        """Why the resolved path ``real`` holds secrets, or None."""
        exempt = [self.workspace, *self.read_roots]
        for prefix in SENSITIVE_PREFIXES:
            if (real == prefix or real.startswith(prefix)) and not any(is_within(real, r) for r in exempt):
                if prefix == "/root" and not is_within(real, "/root"):
                    continue  # "/rootfs" is not /root
                return f"{real} is a sensitive system path"
        if SENSITIVE_PROC.match(real):
            return f"{real} exposes another process's memory or environment"
        parts = real.split("/")
        for part in parts:
            if part in SENSITIVE_DIRS:
                return f"{real} is inside a credentials directory ({part})"
        for (sub,) in SENSITIVE_SUBPATHS:
            if sub + "/" in real + "/":
                return f"{real} is inside a credentials directory ({sub.lstrip('/')})"
        name = parts[-1]
        for pattern in SENSITIVE_NAMES:
            if fnmatch.fnmatch(name, pattern):
                return f"{real} looks like a secret (files named {pattern} are refused)"
        return None

    def check_cwd(self, cwd: str | None) -> str:
        """The resolved working directory; it must be an existing directory inside the workspace."""
        real = self.resolve(cwd) if cwd else self.workspace
        if not self.in_workspace(real):
            raise PolicyViolation(f"the working directory {real} is outside the workspace {self.workspace}")
        if not os.path.isdir(real):
            raise PolicyViolation(f"the working directory {real} does not exist or is not a directory")
        return real

    def check_read(self, path: str, cwd: str | None = None, *, confined: bool = False) -> str:
        """Resolve ``path`` for reading; refuse sensitive files, and with ``confined`` anything
        outside the workspace and the read roots. Returns the resolved path."""
        real = self.resolve(path, cwd)
        reason = self.sensitive_reason(real)
        if reason:
            raise PolicyViolation(f"reading {path!r} is refused: {reason}")
        if confined and not any(is_within(real, r) for r in [self.workspace, *self.read_roots]):
            roots = ", ".join([self.workspace, *self.read_roots])
            raise PolicyViolation(
                f"reading {path!r} is refused: {real} is outside the allowed roots ({roots}); "
                "add its directory to SHELL.READ_ROOTS"
            )
        return real

    def check_write(self, path: str, cwd: str | None = None) -> str:
        """Resolve ``path`` for writing (create, modify, delete); returns the resolved path."""
        if path in HARMLESS_WRITE_TARGETS:
            return path
        if self.mode == "readonly":
            raise PolicyViolation(f"SHELL.MODE is readonly: nothing may be written (target {path!r})")
        real = self.resolve(path, cwd)
        if not self.in_workspace(real):
            shown = f"{path!r} resolves to {real}, which is" if real != path else f"{path!r} is"
            raise PolicyViolation(f"write outside the workspace: {shown} outside {self.workspace}")
        reason = self.sensitive_reason(real)
        if reason:
            raise PolicyViolation(f"writing {path!r} is refused: {reason}")
        rel = os.path.relpath(real, self.workspace).split("/")
        if any(p in PROTECTED_COMPONENTS for p in rel) or rel[-1] in PROTECTED_NAMES:
            raise PolicyViolation(
                f"writing {path!r} is refused: it is a configuration or hook file that other "
                "programs would execute (.git/, .gitconfig, shell start-up files)"
            )
        try:
            st = os.lstat(real)
        except OSError:
            return real
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            raise PolicyViolation(
                f"writing {path!r} is refused: the file has other hard links, "
                "which may be outside the workspace"
            )
        return real


def _fd_path(fd: int) -> str:
    # The kernel's view of what an open descriptor is; without /proc this stays "/proc/self/fd/N",
    # which is inside no workspace, so the checks below fail closed.
    return os.path.realpath(f"/proc/self/fd/{fd}")


def _open_dir_below(parent: int, name: str, shown: str) -> int:
    """Open (creating it if missing) the directory ``name`` under the descriptor ``parent``
    without following a symlink."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=parent)
    try:
        return os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(f"{_fd_path(parent)}/{name}"):
            raise PolicyViolation(
                f"write outside the workspace refused: a folder of {shown} became a symlink after the check"
            ) from exc
        raise


def _open_confined(path: str, flags: int, workspace: str) -> int:
    if not is_within(path, workspace) or path == workspace:
        raise PolicyViolation(f"write outside the workspace: {path} is not a file below {workspace}")
    parts = os.path.relpath(path, workspace).split("/")
    # check_write resolved every symlink, so below the workspace the path has none: walking it
    # component by component with O_NOFOLLOW refuses any symlink swapped in since the check.
    dir_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if _fd_path(dir_fd) != workspace:
            raise PolicyViolation(f"write refused: the workspace {workspace} was replaced by a symlink")
        for name in parts[:-1]:
            next_fd = _open_dir_below(dir_fd, name, path)
            os.close(dir_fd)
            dir_fd = next_fd
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PolicyViolation(
                    f"write outside the workspace refused: {path} became a symlink after the check"
                ) from exc
            raise
    finally:
        os.close(dir_fd)


def open_for_write(path: str, *, append: bool, workspace: str | None) -> int:
    """Open ``path`` for writing and return a blocking, close-on-exec descriptor; missing parent
    folders are created. Truncates unless ``append``.

    ``path`` must already have passed :meth:`PathGuard.check_write` (so it is a resolved path).
    With ``workspace`` set the open is confined to it even if the tree changes after that check: no
    folder below the workspace may have become a symlink, the opened file's real path is checked
    again through ``/proc/self/fd``, and a file with other hard links is refused before anything is
    truncated. ``workspace=None`` (unrestricted mode) and ``/dev/null`` open ``path`` as given.
    Raises PolicyViolation when the write would leave the workspace, OSError for the rest (a FIFO
    with no reader gives ENXIO instead of blocking).
    """
    # O_NONBLOCK so a FIFO without a reader fails instead of hanging; O_TRUNC only after the checks.
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_APPEND if append else 0)
    if path == os.devnull or workspace is None:
        if path != os.devnull:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, flags, 0o644)
    else:
        fd = _open_confined(path, flags, workspace)
    try:
        st = os.fstat(fd)
        if workspace is not None and path != os.devnull:
            real = _fd_path(fd)
            if not is_within(real, workspace):
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
