"""Starweave's own file calls on the model's behalf, made with the privileges of a sandboxed command.

Every sandboxed command runs without any capability (bubblewrap and the Landlock launcher drop them
all), so a command run as root cannot read a file its mode bits or ACL refuse to root, and cannot
reach what needs a capability (``/proc/kcore`` and the like). Starweave, run as root, holds them
all. Capabilities belong to a thread, not to the process: lowering the calling thread's *effective*
set for the length of one call lets the kernel itself judge that call as it would judge the sandboxed
command (mode bits, ACLs, security modules), while Starweave's other threads keep theirs. The
permitted set is left as it is, so the effective set is raised back afterwards.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager

from starweave.errors import PolicyViolation

_VERSION_3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set
_HEADER = struct.Struct("=Ii")
_DATA = struct.Struct("=6I")


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _capget() -> tuple[int, int, int]:
    """The calling thread's (effective, permitted, inheritable) capability sets."""
    data = ctypes.create_string_buffer(_DATA.size)
    if _libc().capget(_HEADER.pack(_VERSION_3, 0), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capget: {os.strerror(err)}")
    eff0, prm0, inh0, eff1, prm1, inh1 = _DATA.unpack(data.raw)
    return (eff1 << 32) | eff0, (prm1 << 32) | prm0, (inh1 << 32) | inh0


def _capset(effective: int, permitted: int, inheritable: int) -> None:
    """Set the calling thread's capability sets (pid 0 in the header: this thread only)."""
    mask = 0xFFFFFFFF
    data = _DATA.pack(
        effective & mask,
        permitted & mask,
        inheritable & mask,
        effective >> 32,
        permitted >> 32,
        inheritable >> 32,
    )
    if _libc().capset(_HEADER.pack(_VERSION_3, 0), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def effective_capabilities() -> int:
    """The calling thread's effective capability set, as a bit mask."""
    return _capget()[0]


@contextmanager
def sandbox_privileges() -> Iterator[None]:
    """Run the body with no effective capability in this thread, as a sandboxed command runs.

    A no-op for a thread that holds none (Starweave not run as root). Refuses (PolicyViolation)
    when the capabilities cannot be lowered: the call would otherwise see more than the sandbox.
    The body must stay on this thread (no ``await`` inside)."""
    try:
        effective, permitted, inheritable = _capget()
    except OSError as exc:
        raise PolicyViolation(
            f"cannot check what a sandboxed command may read: {exc.strerror or exc}"
        ) from None
    if not effective:
        yield
        return
    try:
        _capset(0, permitted, inheritable)
    except OSError as exc:
        raise PolicyViolation(
            f"cannot drop this thread's capabilities to read as a sandboxed command: {exc.strerror or exc}"
        ) from None
    try:
        yield
    finally:
        # Raising back what is still permitted cannot fail; if it did, this thread stays without
        # capabilities (safe) and the error says so.
        _capset(effective, permitted, inheritable)
