"""The bubblewrap command line for one simple command.

Inside: a new user, PID, IPC, UTS and cgroup namespace (and network, unless SHELL.ALLOW_NETWORK);
the whole file system read-only and nosuid/nodev; a minimal ``/dev`` (read-only, with a size-capped
``/dev/shm``); a ``/proc`` of its own; a private size-capped ``/tmp`` holding the private HOME;
every hidden path (:mod:`.hidden`) masked by an empty read-only tmpfs or ``/dev/null``; the workspace
bound back read-write (read-only in readonly mode) and the read roots read-only, after the masks,
since either may live under ``/tmp`` or ``/root``; ``--die-with-parent`` and ``--new-session``.

As root (in a new user namespace when the kernel lets it mount /proc there, else in the initial one)
the first process keeps only CAP_SYS_ADMIN (to set the namespace's pid_max) and CAP_SETPCAP
(to clear the bounding set) inside the new user namespace; the launcher drops both before execve.
Not as root, bubblewrap leaves no capability at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from starweave.tools.confine.hidden import HiddenPath
from starweave.tools.confine.paths import is_within

ROOT_SETUP_CAPS = ("CAP_SYS_ADMIN", "CAP_SETPCAP")
MASK_TMPFS_BYTES = 4096


@dataclass
class BwrapLayout:
    """Everything that shapes one bubblewrap command line."""

    workspace: str
    cwd: str
    home: str
    readonly: bool = False
    allow_network: bool = False
    as_root: bool = False
    userns: bool = True
    tmp_bytes: int = 256 * 1024 * 1024
    read_roots: list[str] = field(default_factory=list)
    hidden: list[HiddenPath] = field(default_factory=list)
    # Folders the launcher itself needs (the interpreter's prefix), bound back read-only if hidden.
    runtime: list[str] = field(default_factory=list)


def namespace_args(allow_network: bool, as_root: bool, userns: bool = True) -> list[str]:
    """Namespaces, session and capability options. ``userns`` False (root only) keeps the initial
    user namespace, for where a new one cannot mount /proc (a /proc partly covered, as in many
    containers); the capabilities are dropped all the same."""
    args = ["--unshare-user"] if userns or not as_root else []
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not allow_network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session"]
    if as_root:
        args += ["--cap-drop", "ALL"]
        for cap in ROOT_SETUP_CAPS:
            args += ["--cap-add", cap]
    return args


def _hidden_by(path: str, layout: BwrapLayout) -> bool:
    return any(h.is_dir and is_within(path, h.path) for h in layout.hidden) or is_within(path, "/tmp")


def filesystem_args(layout: BwrapLayout) -> list[str]:
    """Mounts, in the order bubblewrap must apply them."""
    size = str(layout.tmp_bytes)
    args = [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
    ]
    args += ["--proc", "/proc", "--size", size, "--tmpfs", "/tmp", "--dir", layout.home]
    masked_dirs: list[str] = []
    for item in layout.hidden:
        if is_within(item.path, "/tmp"):
            continue  # the private /tmp is empty
        if not os.path.lexists(item.path):
            # Removed since the (cached) search: nothing to hide, and bubblewrap cannot mount over a
            # missing path in the read-only root, which would fail every command until the next search.
            continue
        if item.is_dir != os.path.isdir(item.path):
            item = HiddenPath(item.path, not item.is_dir)  # a file replaced by a folder, or back
        if item.is_dir:
            args += ["--size", str(MASK_TMPFS_BYTES), "--tmpfs", item.path]
            masked_dirs.append(item.path)
        else:
            args += ["--ro-bind", "/dev/null", item.path]
    for path in layout.runtime:
        if _hidden_by(path, layout):
            args += ["--ro-bind", path, path]
    for root in layout.read_roots:
        if os.path.isdir(root) and _hidden_by(root, layout) and not is_within(root, layout.workspace):
            args += ["--ro-bind", root, root]
    args += ["--ro-bind" if layout.readonly else "--bind", layout.workspace, layout.workspace]
    for path in masked_dirs:
        args += ["--remount-ro", path]
    return args


def bwrap_argv(exe: str, layout: BwrapLayout, env: dict[str, str], inner: list[str]) -> list[str]:
    """``bwrap OPTIONS -- inner`` with exactly ``env`` as the environment inside."""
    namespaces = namespace_args(layout.allow_network, layout.as_root, layout.userns)
    args = [exe, *namespaces, *filesystem_args(layout)]
    args += ["--chdir", layout.cwd, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *inner]
