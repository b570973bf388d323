"""Become an unprivileged user where only our own uid is mapped (the isolated root of a non-root run
lives in a user namespace in which we are root): a nested user namespace maps ``uid`` to us, and
re-executing the worker there leaves it no capability at all."""

from __future__ import annotations

import ctypes
import os
import sys
from typing import NoReturn

CLONE_NEWUSER = 0x10000000


def become_user(uid: int, state_file: str) -> NoReturn:
    """Enter a new user namespace as ``uid`` (same gid) and exec the worker's second stage, which
    reads its request and layout from ``state_file``. Must run before any thread starts."""
    libc = ctypes.CDLL(None, use_errno=True)
    outer_uid, outer_gid = os.geteuid(), os.getegid()  # unmapped (overflow ids) once we are inside
    if libc.unshare(CLONE_NEWUSER) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWUSER): {os.strerror(err)}")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")  # required to map our gid without CAP_SETGID in the parent namespace
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{uid} {outer_uid} 1\n")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{uid} {outer_gid} 1\n")
    os.environ["SWH_STAGE2"] = state_file
    # uid != 0 after exec: the capabilities of the namespace's creator are gone.
    os.execv(sys.executable, [sys.executable, "-m", "hostile.worker"])
