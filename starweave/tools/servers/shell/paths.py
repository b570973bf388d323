"""Path checks shared by the shell policy and the file server.

Every path is resolved against the working directory with symlinks followed (``os.path.realpath``),
so ``..`` and a symlink pointing out of the workspace cannot carry a write outside it. Writes must
land inside the workspace (and never in readonly mode); reads may go anywhere except sensitive
files (keys, credentials, password databases, other processes' environments).
"""

from __future__ import annotations

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
