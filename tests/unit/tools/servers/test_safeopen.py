"""Starweave's own opens: only the checked regular file, never a FIFO, device, socket or a symlink
swapped in after the check; bounded reads. (Set-id modes: the seccomp filter refuses them, see
test_sandbox_seccomp.py and tests/integration/test_sandbox_tools.py.)"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from starweave.errors import PolicyViolation
from starweave.tools.confine.paths import PathGuard
from starweave.tools.confine.safeopen import open_checked_read, open_for_write, read_checked


def test_regular_file_and_devnull_are_read(workspace: Path) -> None:
    real = PathGuard(str(workspace)).check_read("notes.txt")
    with os.fdopen(open_checked_read(real), "rb") as fh:
        assert fh.read().startswith(b"alpha")
    with os.fdopen(open_checked_read(os.devnull), "rb") as fh:
        assert fh.read() == b""


def test_fifo_device_socket_and_directory_are_refused_without_blocking(workspace: Path) -> None:
    os.mkfifo(workspace / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(workspace / "sock"))
    try:
        start = time.monotonic()
        for path, what in (
            (workspace / "fifo", "FIFO"),
            ("/dev/zero", "character device"),
            (workspace / "sock", "socket"),
            (workspace / "demo", "directory"),
        ):
            with pytest.raises(PolicyViolation, match=what):
                open_checked_read(str(path))
        assert time.monotonic() - start < 10  # nothing waited for a writer
    finally:
        sock.close()


def test_a_symlink_in_place_of_the_checked_file_is_refused(workspace: Path, tmp_path: Path) -> None:
    guard = PathGuard(str(workspace))
    (workspace / "f.txt").write_text("inside\n")
    real = guard.check_read("f.txt")
    os.unlink(workspace / "f.txt")
    os.symlink(tmp_path / "outside" / "target.txt", workspace / "f.txt")
    with pytest.raises(PolicyViolation, match="symlink"):  # O_NOFOLLOW: the link is not followed
        open_checked_read(real)


def test_a_parent_swapped_for_a_symlink_is_noticed(workspace: Path, tmp_path: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "target.txt").write_text("inside\n")
    real = PathGuard(str(workspace)).check_read("sub/target.txt")
    os.rename(workspace / "sub", workspace / "old")
    os.symlink(tmp_path / "outside", workspace / "sub")
    with pytest.raises(PolicyViolation, match="changed after the check"):
        open_checked_read(real)


def test_reads_are_capped(workspace: Path) -> None:
    (workspace / "big").write_bytes(b"x" * 5000)
    assert read_checked(str(workspace / "big"), 5000, "script") == b"x" * 5000
    with pytest.raises(PolicyViolation, match="larger than 4096 bytes"):
        read_checked(str(workspace / "big"), 4096, "script")


def test_writes_never_open_a_device_or_socket(workspace: Path) -> None:
    guard = PathGuard(str(workspace))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(workspace / "sock"))
    try:
        with pytest.raises(PolicyViolation, match="socket"):
            open_for_write(guard.check_write("sock"), append=True, workspace=guard.workspace)
    finally:
        sock.close()
