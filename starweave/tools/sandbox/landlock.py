"""The Landlock side of the sandbox, computed in Starweave's process: the kernel's ABI version and
the ruleset the launcher applies to a command (a small ctypes layer, no third-party binding).

Landlock only allows: the ruleset handles every file-system right the kernel knows, and grants

* reading and executing everywhere except the hidden paths (:mod:`.hidden`): the rules are built
  by walking down only the folders that hold a secret and granting each sibling as a whole;
* writing only in the workspace (unless readonly) and the command's private HOME/TMPDIR;
* reading and writing a few character devices (``/dev/null``, ``/dev/zero``, ``/dev/full``,
  ``/dev/random``, ``/dev/urandom``), and nothing else under ``/dev``;
* from ``/proc`` only harmless system-wide files and the command's own ``/proc/PID`` (or all of a
  private /proc when running as root in its own PID namespace).

Landlock has no right for chmod, chown, utimes or xattrs: as root the launcher also makes every
mount but the writable ones read-only in the command's own mount namespace (and its own PID and
IPC namespaces); a normal user gets no namespace, so the supervisor makes those changes itself,
inside the writable folders only (``launcher_notify``), and the seccomp filter keeps the command
from the user's other processes (``seccomp.rules(host_shared=True)``). Signals are then scoped by
Landlock itself, which needs ABI 6: below it a normal user's Landlock is refused. Device nodes,
FIFOs and sockets can be created nowhere; ``/tmp``, ``/var/tmp`` and ``/dev/shm`` are neither
readable nor writable (the private TMPDIR replaces them). With ABI >= 4 TCP bind/connect are
denied unless SHELL.ALLOW_NETWORK; with ABI >= 6 signals and abstract unix sockets are scoped to the
sandbox.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

from starweave.tools.confine.hidden import HiddenPath, hidden_paths
from starweave.tools.confine.paths import is_within

LANDLOCK_CREATE_RULESET = 444
LANDLOCK_CREATE_RULESET_VERSION = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR
WRITE = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | REFER | TRUNCATE
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
PROC_FILES = (
    "/proc/meminfo",
    "/proc/uptime",
    "/proc/cpuinfo",
    "/proc/loadavg",
    "/proc/stat",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/ostype",
    "/proc/sys/kernel/pid_max",
)
# Trees the walk never grants as a whole: replaced (proc, dev) or shared scratch space.
SPECIAL_TREES = ("/proc", "/dev", "/tmp", "/var/tmp")
USER_MIN_ABI = 6  # signal scoping: without a PID namespace nothing else keeps signals in


def user_abi_problem(abi: int) -> str:
    """Why Landlock ABI ``abi`` is refused for a normal user (one line)."""
    return (
        f"Landlock ABI {abi} cannot keep a normal user's commands from signalling the user's other "
        f"processes (that needs ABI {USER_MIN_ABI}, Linux 6.12+; as root a PID namespace does it)"
    )


def confinement_text(as_root: bool) -> str:
    """How Landlock confines commands for root or for a normal user, for doctor and the run header."""
    if as_root:
        return (
            "writes only in the workspace; own PID, IPC and mount namespaces with the rest read-only; "
            "seccomp, limits"
        )
    return (
        "writes only in the workspace; as a normal user: no namespaces, so chmod, chown, utimes and "
        "xattrs are made by the supervisor inside the workspace only, signals scoped, seccomp, limits"
    )


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@functools.cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled (cached)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(
        ctypes.c_long(LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def abi_features(abi: int) -> list[str]:
    """What this ABI adds to the file-system rules, for doctor."""
    features = ["file system"]
    if abi >= 2:
        features.append("cross-folder links")
    if abi >= 3:
        features.append("truncation")
    if abi >= 4:
        features.append("TCP bind/connect")
    if abi >= 5:
        features.append("device ioctls")
    if abi >= 6:
        features.append("signal and abstract-socket scoping")
    return features


def readable_rules(
    hidden: list[HiddenPath], skip: tuple[str, ...] = SPECIAL_TREES, top: str = "/"
) -> list[str]:
    """The folders and files to grant reading so that everything under ``top`` is readable except
    ``hidden`` and the ``skip`` trees: walk down only the folders that contain one of them."""
    blocked = [h.path for h in hidden] + list(skip)
    grants: list[str] = []

    def walk(folder: str) -> None:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            if path in blocked or os.path.islink(path):
                continue
            if any(is_within(b, path) for b in blocked) and os.path.isdir(path):
                walk(path)
            else:
                grants.append(path)

    walk(top)
    return grants


def path_rules(workspace: str, read_roots: list[str], readonly: bool) -> list[tuple[str, int]]:
    """``(path, rights)`` for everything the command may touch, besides its private folders and its
    own /proc entry; computed for every command, so a secret or a top-level entry made a moment
    ago is already ruled on."""
    rules = [(p, READ) for p in readable_rules(hidden_paths([workspace, *read_roots]))]
    rules += [(root, READ) for root in read_roots if os.path.exists(root)]
    rules += [(dev, DEVICE) for dev in DEVICES]
    rules += [(f, READ_FILE) for f in PROC_FILES]
    return [*rules, (workspace, READ if readonly else WRITE)]


def launcher_spec(
    abi: int, workspace: str, read_roots: list[str], readonly: bool, allow_network: bool
) -> dict[str, Any]:
    """The ``landlock`` part of the launcher's spec for one command."""
    handled = _handled_fs(abi)
    return {
        "fs": handled,
        "net": 0 if allow_network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP,
        "scoped": SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0,
        "rules": path_rules(workspace, read_roots, readonly),
        "self_proc": READ_FILE | READ_DIR,
        "proc_all": READ_FILE | READ_DIR,
    }
