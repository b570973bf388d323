"""The one check for what Starweave reads on the model's behalf: only what a sandboxed command can read.

Starweave runs unconfined, often as root, so whatever it reads for the model (the file tools, a batch
plan's object copied into the workspace) must be something the model's own commands could read in
the sandbox; otherwise Starweave is the way around the sandbox. A sandboxed command sees the whole
file system read-only except

* the hidden paths (:func:`~starweave.tools.confine.hidden.hidden_paths` for the workspace and the
  read roots in force): bubblewrap masks them, Landlock grants nothing there;
* ``/tmp``, ``/var/tmp``, ``/dev`` and ``/proc``, of which it gets a private copy or nothing (a
  workspace or read root inside one of them is bound back, and stays readable);

and it reads without any capability. The workspace and the read roots are never hidden. So a read
for the model passes, in this order: :meth:`PathGuard.check_read` (secret names, other processes'
``/proc`` entries, and with ``confined`` the workspace and read roots only), :func:`sandbox_read_reason`
on the resolved path, then :func:`open_checked_read` (a regular file, no symlink swapped in since the
check) in a thread holding no capability (:func:`sandbox_privileges`), so that the kernel refuses
what mode bits and ACLs refuse a sandboxed command.
"""

from __future__ import annotations

from collections.abc import Sequence

from starweave.errors import PolicyViolation
from starweave.tools.confine.hidden import hidden_paths
from starweave.tools.confine.paths import PathGuard, is_within
from starweave.tools.confine.privilege import sandbox_privileges
from starweave.tools.confine.safeopen import open_checked_read

__all__ = ["PRIVATE_TREES", "check_model_read", "open_for_model", "sandbox_privileges", "sandbox_read_reason"]

# Trees each sandboxed command gets a private copy of, or none: bubblewrap mounts its own /proc, /dev
# and /tmp; Landlock grants neither /tmp nor /var/tmp and only a few devices and /proc files.
PRIVATE_TREES = ("/proc", "/dev", "/tmp", "/var/tmp")


def sandbox_read_reason(real: str, roots: Sequence[str]) -> str | None:
    """Why a sandboxed command could not see the resolved path ``real``, or None when it could.

    ``roots`` are the workspace and the read roots in force (real paths): never hidden, and bound
    back even inside a private tree."""
    for tree in PRIVATE_TREES:
        if is_within(real, tree):
            if any(is_within(real, root) and is_within(root, tree) for root in roots):
                return None
            return (
                f"{real} is in {tree}, which sandboxed commands do not share (each gets a private "
                "one, or none)"
            )
    if any(is_within(real, root) for root in roots):
        return None
    for item in hidden_paths(list(roots)):
        if real == item.path or (item.is_dir and is_within(real, item.path)):
            where = "" if real == item.path else f" (inside {item.path})"
            return f"{real} is hidden from sandboxed commands{where}"
    return None


def check_model_read(guard: PathGuard, path: str, cwd: str | None = None, *, confined: bool) -> str:
    """Resolve ``path`` for a read on the model's behalf and return the resolved path; raises
    PolicyViolation (one line naming the path and the reason) when the policy refuses it or a
    sandboxed command could not see it. Permissions are judged when it is opened."""
    real = guard.check_read(path, cwd, confined=confined)
    reason = sandbox_read_reason(real, [guard.workspace, *guard.read_roots])
    if reason:
        raise PolicyViolation(f"reading {path!r} is refused: {reason}")
    return real


def open_for_model(guard: PathGuard, path: str, cwd: str | None = None, *, confined: bool) -> tuple[str, int]:
    """Open the regular file ``path`` for reading on the model's behalf, only if a sandboxed command
    could read it; returns the resolved path and a blocking, close-on-exec descriptor.

    Raises PolicyViolation when it is refused (:func:`check_model_read`), is not a regular file,
    changed after the check, or its permissions refuse a command without capabilities;
    FileNotFoundError when it does not exist."""
    real = check_model_read(guard, path, cwd, confined=confined)
    with sandbox_privileges():
        try:
            fd = open_checked_read(real, allow_devnull=False)
        except PermissionError:
            raise PolicyViolation(
                f"reading {path!r} is refused: a sandboxed command may not read {real} (permission denied)"
            ) from None
    return real, fd
