"""Path checks shared by the shell policy and the file server.

Every path is resolved against the working directory with symlinks followed (``os.path.realpath``),
so ``..`` and a symlink pointing out of the workspace cannot carry a write outside it. Writes must
land inside the workspace (and never in readonly mode); reads may go anywhere except sensitive
files (keys, credentials, password databases, other processes' memory, environment and command
line). A path under ``/proc/<pid>/`` is judged on its own name too, before resolution, because the
kernel resolves ``/proc/self/...`` for the process that opens it, not for Starweave.

Files are opened only through :mod:`safeopen` (re-exported here).
"""

from __future__ import annotations

import fnmatch
import os
import pwd
import re
import stat
from collections.abc import Iterable
from functools import lru_cache

from starweave.errors import PolicyViolation
from starweave.tools.confine.safeopen import TOOL_DEVICES, describe_mode, open_for_write

__all__ = ["PathGuard", "is_within", "open_for_write", "secret_roots"]

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
    "/var/backups",
    "/run/secrets",
)
# /proc/<pid>/ entries that say nothing secret; every other one (environ, cmdline, mem, maps, fd/,
# root, cwd, exe ...) exposes another process's memory, environment, command line or files.
PROC_SAFE_ENTRIES = frozenset(
    {
        "stat",
        "status",
        "statm",
        "comm",
        "cgroup",
        "limits",
        "io",
        "sched",
        "schedstat",
        "oom_score",
        "oom_score_adj",
        "oom_adj",
        "wchan",
        "loginuid",
        "sessionid",
        "uid_map",
        "gid_map",
        "mounts",
        "mountinfo",
        "mountstats",
        "net",
        "cpuset",
        "timerslack_ns",
        "autogroup",
        "task",
    }
)
PROC_PID = re.compile(r"^/proc/(\d+|self|thread-self)(?:/task/(\d+))?(?:/([^/]+))?")
# Names that stand for "the standard streams of the process that opens them": the policy cannot
# know what they are for a tool (Starweave would resolve its own).
STREAM_PATHS = ("/dev/stdin", "/dev/fd", "/dev/tty")
# A path with one of these directory components anywhere is refused.
SENSITIVE_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".azure", ".kube", ".password-store", ".docker"})
SENSITIVE_SUBPATHS = (
    ("/.config/gcloud",),
    ("/.config/gh",),
    ("/.local/share/keyrings",),
    ("/.config/containers/auth.json",),
    ("/.cargo/credentials",),
    ("/.cargo/credentials.toml",),
    ("/.terraform.d/credentials.tfrc.json",),
)
# Shell and REPL histories hold what was typed, passwords included.
HISTORY_FILES = (
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
)
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
    ".vault-token",
    *HISTORY_FILES,
    # the password and sudo databases, wherever a copy of them lies (a backup, a container layer)
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
)
# Names a recursive reader skips (injected as --exclude patterns): the names above plus the password
# databases, and the credentials directories.
SECRET_FILE_NAMES = (*SENSITIVE_NAMES, "sudoers", "opasswd")
SECRET_DIR_NAMES = (*sorted(SENSITIVE_DIRS), "gcloud", "keyrings", "private")
# Files a program may *execute* when it next runs (git config and hooks, shell start-up files):
# writing them inside the workspace would turn a later harmless command into arbitrary code.
PROTECTED_COMPONENTS = frozenset({".git"})
PROTECTED_NAMES = frozenset({".gitconfig", ".bashrc", ".bash_profile", ".profile", ".curlrc", ".wgetrc"})


@lru_cache(maxsize=1)
def secret_roots() -> tuple[str, ...]:
    """Directories holding secrets: a recursive read may not start at one of them or above.

    The sensitive system paths, /proc and /dev, and the home of root and of every login user
    (uid >= 1000): system accounts' "homes" are /bin, /usr/sbin and the like."""
    roots = {"/proc", "/dev", "/home", "/etc/shadow", "/etc/ssh", *SENSITIVE_PREFIXES}
    for entry in pwd.getpwall():
        home = entry.pw_dir
        if (entry.pw_uid == 0 or 1000 <= entry.pw_uid < 65534) and home.startswith("/") and home != "/":
            roots.add(os.path.normpath(home))
    return tuple(sorted(roots))


def proc_reason(path: str) -> str | None:
    """Why the absolute (not resolved) ``path`` under /proc or /dev reaches another process's
    secrets or streams, or None."""
    if path == "/dev/fd" or any(path == p or path.startswith(p + "/") for p in STREAM_PATHS):
        return f"{path} is a standard stream of whatever process opens it; use - for stdin"
    m = PROC_PID.match(path)
    if not m:
        return None
    entry = m.group(3)
    if entry is None or entry in PROC_SAFE_ENTRIES:
        return None
    return f"{path} exposes a process's memory, environment, command line or files"


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

    def lexical(self, path: str, cwd: str | None = None) -> str:
        """``path`` made absolute and normalised without resolving symlinks."""
        return os.path.normpath(os.path.join(cwd or self.workspace, path))

    def in_workspace(self, real: str) -> bool:
        """True when the resolved path ``real`` is inside the workspace."""
        return is_within(real, self.workspace)

    def exempt(self, real: str) -> bool:
        """True when ``real`` is inside the workspace or a read root (the user put it there)."""
        return any(is_within(real, r) for r in [self.workspace, *self.read_roots])

    def sensitive_reason(self, real: str, given: str | None = None) -> str | None:
        """Why the resolved path ``real`` (reached through the absolute, unresolved ``given``) holds
        secrets, or None."""
        for path in (given, real):
            why = proc_reason(path) if path else None
            if why:
                return why
        exempt = [self.workspace, *self.read_roots]
        for prefix in SENSITIVE_PREFIXES:
            if (real == prefix or real.startswith(prefix)) and not any(is_within(real, r) for r in exempt):
                if prefix == "/root" and not is_within(real, "/root"):
                    continue  # "/rootfs" is not /root
                return f"{real} is a sensitive system path"
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

    def no_home(self, path: str) -> None:
        """Refuse a path that starts with ``~``, saying what ``~`` is here: the shell agrees (its
        HOME is an empty private folder), and the user's files are in the workspace."""
        if path == "~" or path.startswith("~/"):
            raise PolicyViolation(
                f"{path!r}: ~ is not the user's home here (the shell's HOME is an empty private "
                f"folder made for each command); the user's files are in the workspace "
                f"{self.workspace}: use a path relative to it"
            )

    def check_read(self, path: str, cwd: str | None = None, *, confined: bool = False) -> str:
        """Resolve ``path`` for reading; refuse sensitive files, and with ``confined`` anything
        outside the workspace and the read roots. Returns the resolved path."""
        self.no_home(path)
        real = self.resolve(path, cwd)
        reason = self.sensitive_reason(real, self.lexical(path, cwd))
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
        self.no_home(path)
        real = self.resolve(path, cwd)
        if not self.in_workspace(real):
            shown = f"{path!r} resolves to {real}, which is" if real != path else f"{path!r} is"
            raise PolicyViolation(f"write outside the workspace: {shown} outside {self.workspace}")
        reason = self.sensitive_reason(real, self.lexical(path, cwd))
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

    def check_type(self, real: str, shown: str, *, tool_devices: bool = True) -> None:
        """Refuse an existing ``real`` that is neither a regular file nor a directory: FIFOs hang
        their reader, devices can be disks or endless, sockets reach other services. A tool may be
        handed /dev/null, /dev/zero, /dev/urandom and friends (``tool_devices``)."""
        if real == os.devnull or (tool_devices and real in TOOL_DEVICES):
            return
        try:
            st = os.stat(real)
        except OSError:
            return  # missing: the tool reports it
        if real in TOOL_DEVICES:
            raise PolicyViolation(
                f"{shown!r} never ends; only tools that stop after a count may read it "
                "(head -c N, dd count=N, od -N N, xxd -l N)"
            )
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise PolicyViolation(
                f"{shown!r} is {describe_mode(st.st_mode)}; only regular files and directories may be "
                "used (FIFOs, devices and sockets are refused)"
            )

    def recursive_reason(self, real: str) -> str | None:
        """Why a recursive read starting at the resolved ``real`` would reach secrets, or None: it
        may not start at or above a secret location (/, /etc, /home, a home, /root, /proc ...)
        unless it stays inside the workspace or a read root."""
        if self.exempt(real):
            return None
        for root in secret_roots():
            if is_within(root, real):
                return (
                    f"a recursive read of {real} would include {root}, which holds secrets; "
                    "name a narrower folder"
                )
        return None
