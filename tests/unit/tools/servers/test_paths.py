"""open_for_write: the one confined write-open of the shell runner and the file server, with the
tree changed between the policy check and the open (as a concurrent process could)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from starweave.errors import PolicyViolation
from starweave.tools.confine.paths import PathGuard, open_for_write


def _write(path: str, data: bytes, *, append: bool, workspace: str | None) -> None:
    fd = open_for_write(path, append=append, workspace=workspace)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def test_creates_folders_truncates_and_appends(workspace: Path) -> None:
    guard = PathGuard(str(workspace))
    real = guard.check_write("new/deeper/a.txt")
    _write(real, b"one\n", append=False, workspace=guard.workspace)
    _write(real, b"two\n", append=True, workspace=guard.workspace)
    assert (workspace / "new/deeper/a.txt").read_bytes() == b"one\ntwo\n"
    _write(real, b"3\n", append=False, workspace=guard.workspace)
    assert (workspace / "new/deeper/a.txt").read_bytes() == b"3\n"
    _write(os.devnull, b"gone", append=False, workspace=guard.workspace)


def test_parent_swapped_for_symlink_out_of_the_workspace(workspace: Path, tmp_path: Path) -> None:
    guard = PathGuard(str(workspace))
    (workspace / "sub").mkdir()
    real = guard.check_write("sub/f.txt")
    (workspace / "sub").rmdir()
    os.symlink(tmp_path / "outside", workspace / "sub")  # swapped in after the check
    with pytest.raises(PolicyViolation, match="symlink"):
        _write(real, b"escaped", append=False, workspace=guard.workspace)
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["target.txt"]


def test_missing_parent_created_as_symlink_after_the_check(workspace: Path, tmp_path: Path) -> None:
    guard = PathGuard(str(workspace))
    real = guard.check_write("later/deep/f.txt")
    os.symlink(tmp_path / "outside", workspace / "later")
    with pytest.raises(PolicyViolation):
        _write(real, b"escaped", append=True, workspace=guard.workspace)
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["target.txt"]


def test_file_swapped_for_symlink_or_hard_link_is_not_touched(workspace: Path, tmp_path: Path) -> None:
    guard = PathGuard(str(workspace))
    outside = tmp_path / "outside" / "target.txt"
    real = guard.check_write("plain.txt")
    os.symlink(outside, workspace / "plain.txt")
    with pytest.raises(PolicyViolation, match="symlink"):
        _write(real, b"x", append=False, workspace=guard.workspace)
    os.unlink(workspace / "plain.txt")
    os.link(outside, workspace / "plain.txt")
    with pytest.raises(PolicyViolation, match="hard links"):
        _write(real, b"x", append=False, workspace=guard.workspace)
    assert outside.read_text() == "outside\n"  # refused before any truncation


def test_workspace_itself_swapped_is_caught_by_the_fd_recheck(workspace: Path, tmp_path: Path) -> None:
    guard = PathGuard(str(workspace))
    real = guard.check_write("a.txt")
    shutil.move(workspace, tmp_path / "moved")
    os.symlink(tmp_path / "outside", workspace)
    with pytest.raises(PolicyViolation, match="workspace"):
        _write(real, b"escaped", append=False, workspace=guard.workspace)
    assert not (tmp_path / "outside" / "a.txt").exists()


def test_unrestricted_open_follows_the_path_as_given(workspace: Path, tmp_path: Path) -> None:
    target = str(workspace / "link_out" / "made" / "u.txt")
    _write(target, b"free\n", append=False, workspace=None)
    assert (tmp_path / "outside" / "made" / "u.txt").read_bytes() == b"free\n"


def test_fifo_is_refused_instead_of_opened(workspace: Path) -> None:
    # Issue 11: Starweave never opens a FIFO, device or socket (it used to fail with ENXIO here).
    os.mkfifo(workspace / "pipe")
    guard = PathGuard(str(workspace))
    with pytest.raises(PolicyViolation, match="FIFO"):
        open_for_write(guard.check_write("pipe"), append=False, workspace=guard.workspace)
