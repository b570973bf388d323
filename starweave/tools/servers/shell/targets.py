"""Which program a command really runs: the name's rule is not enough.

``argv[0]`` is resolved the way exec will resolve it (a PATH lookup with the runner's clean PATH, or
the given path against the working directory) and every symlink is followed, so a workspace link
``b/cat -> /bin/bash`` is judged as bash. The real program's name decides the rule, except for the
link names a program itself answers to (``awk`` for mawk, ``pkill`` for pgrep, ``unxz`` for xz,
``sh`` for dash): those keep the name's rule because the program behaves by that name.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.launch import CLEAN_PATH
from starweave.tools.servers.shell.paths import PathGuard

SYSTEM_BIN_DIRS = frozenset({"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"})
# Real program -> the names it is installed under and behaves by (Debian 12).
ALIASES: dict[str, frozenset[str]] = {
    "mawk": frozenset({"awk", "nawk"}),
    "gawk": frozenset({"awk", "nawk"}),
    "original-awk": frozenset({"awk", "nawk"}),
    "xz": frozenset({"unxz", "xzcat", "lzma", "unlzma", "lzcat"}),
    "zstd": frozenset({"unzstd", "zstdcat", "zstdmt"}),
    "bzip2": frozenset({"bunzip2", "bzcat"}),
    "pgrep": frozenset({"pkill", "pidwait"}),
    "killall5": frozenset({"pidof"}),
    "which.debianutils": frozenset({"which"}),
    "x86_64-linux-gnu-strings": frozenset({"strings"}),
    "aarch64-linux-gnu-strings": frozenset({"strings"}),
    "nc.openbsd": frozenset({"nc", "netcat"}),
    "nc.traditional": frozenset({"nc", "netcat"}),
    "traceroute.db": frozenset({"traceroute"}),
    "kmod": frozenset({"lsmod"}),
    "ncal": frozenset({"cal"}),
    "dash": frozenset({"sh"}),
    "bash": frozenset({"sh", "rbash"}),
    "ls": frozenset({"dir"}),
    "vim.basic": frozenset({"vi", "vim", "view", "ex"}),
}


@dataclass(frozen=True)
class Target:
    """The command's rule name, the real program (resolved path, "" when not installed) and whether
    it lives in the workspace (a workspace program)."""

    name: str
    real: str
    in_workspace: bool = False


def _alias_name(given: str, real: str) -> str:
    real_name = os.path.basename(real)
    if given == real_name or given in ALIASES.get(real_name, frozenset()):
        return given
    if real_name.startswith("python3") and given in ("python3", "python"):
        return given
    return real_name


def resolve_target(word: str, cwd: str, guard: PathGuard) -> Target:
    """Resolve ``word`` (argv[0]) to the program exec will run."""
    if "/" not in word:
        found = shutil.which(word, path=CLEAN_PATH)
        if found is None:
            return Target(word, "")  # not installed: the runner reports "command not found"
        return Target(_alias_name(word, os.path.realpath(found)), os.path.realpath(found))
    real = guard.resolve(word, cwd)
    if guard.in_workspace(real):
        return Target(os.path.basename(word), real, in_workspace=True)
    given_dir = os.path.dirname(guard.lexical(word, cwd))
    if os.path.dirname(real) not in SYSTEM_BIN_DIRS and given_dir not in SYSTEM_BIN_DIRS:
        raise PolicyViolation(f"{word}: only programs from {', '.join(sorted(SYSTEM_BIN_DIRS))} may run")
    if os.path.dirname(real) not in SYSTEM_BIN_DIRS and not real.startswith(("/usr/", "/etc/alternatives/")):
        raise PolicyViolation(f"{word}: it resolves to {real}, outside the system's program folders")
    return Target(_alias_name(os.path.basename(word), real), real)
