"""The supervisor's removal of a command's private HOME/TMPDIR, and the per-command cgroup's
bookkeeping (on a fake cgroup folder; the kernel's side is in tests/integration/test_sandbox_*.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.sandbox import launch, launcher
from starweave.tools.sandbox.launch import Launch


def test_a_tree_deeper_than_the_recursion_limit_is_removed(tmp_path: Path) -> None:
    top = tmp_path / "starweave-cmd-x"
    top.mkdir()
    depth = 1500
    assert depth > sys.getrecursionlimit()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(depth):  # relative to the last level: the path is far beyond PATH_MAX
            os.mkdir("d", dir_fd=fd)
            with open(os.open("f", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd), "w") as f:
                f.write(str(i))
            sub = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
        os.chmod(f"/proc/self/fd/{fd}", 0o000)  # the deepest folder made unreadable
    finally:
        os.close(fd)
    launcher._remove_tree(str(top))
    assert not top.exists()


def test_removal_never_follows_a_link_and_empties_wide_folders(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    top = tmp_path / "top"
    (top / "home").mkdir(parents=True)
    (top / "home" / "link").symlink_to(outside)
    (top / "home" / "filelink").symlink_to(outside / "keep")
    for i in range(300):
        (top / "tmp" / f"d{i}" / "sub").mkdir(parents=True)
        (top / "tmp" / f"d{i}" / "sub" / "f").write_text("y")
    launcher._remove_tree(str(top))
    assert not top.exists()
    assert (outside / "keep").read_text() == "x"


def test_a_folder_moved_during_removal_stops_it_instead_of_climbing_elsewhere(tmp_path: Path) -> None:
    top = tmp_path / "top"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "f").write_text("y")
    (tmp_path / "keep").write_text("x")
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    real_open = launcher._open_folder

    def moving_open(name: str, dir_fd: int) -> int:
        sub = real_open(name, dir_fd)
        if name == "b":
            os.rename(top / "a", tmp_path / "moved")  # ".." of b is no longer top/a's place
        return sub

    try:
        launcher._open_folder = moving_open  # type: ignore[assignment]
        launcher._remove_below(fd)
    finally:
        launcher._open_folder = real_open  # type: ignore[assignment]
        os.close(fd)
    # b went (the same folder, wherever it is now); climbing on from "moved" would reach tmp_path
    assert (tmp_path / "keep").read_text() == "x" and (tmp_path / "moved").is_dir()


@pytest.fixture
def fake_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu\n")
    monkeypatch.setattr(launch, "_cgroup2_mount", lambda: str(root))
    real_mkdir = os.mkdir

    def mkdir(path: str, mode: int = 0o777) -> None:  # the kernel fills a new cgroup's files
        real_mkdir(path, mode)
        if str(path).startswith(str(root)):
            for name in ("cgroup.procs", "cgroup.subtree_control", "memory.max", "pids.max"):
                Path(path, name).write_text("")

    monkeypatch.setattr(launch.os, "mkdir", mkdir)
    monkeypatch.setattr(launch, "release_cgroup", lambda leaf, wait=2.0: True)
    launch.cgroup_parent.cache_clear()
    yield root
    launch.cgroup_parent.cache_clear()


def test_each_command_gets_a_limited_cgroup_leaf(fake_cgroup: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = ShellConfig(workspace=str(ws), sandbox="landlock", max_memory_mb=300, max_processes=50)
    parent, why = launch.cgroup_parent()
    assert parent == str(fake_cgroup / f"starweave-{os.getpid()}") and why == ""
    assert (fake_cgroup / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert Path(parent, "cgroup.subtree_control").read_text() == "+memory +pids"
    prepared = Launch("landlock", config, str(ws), landlock_abi=3).prepare(
        "/bin/true", ["/bin/true"], str(ws), {}, cgroup=True
    )
    try:
        assert prepared.cgroup and Path(prepared.cgroup).parent == Path(parent)
        assert Path(prepared.cgroup, "memory.max").read_text() == str(300 * 1024 * 1024)
        assert Path(prepared.cgroup, "pids.max").read_text() == str(50 + launch.PID_MAX_SLACK)
        assert "'cgroup_fd': " in " ".join(prepared.argv) and len(prepared.pass_fds) == 1
    finally:
        prepared.close()
    assert "memory per command (cgroup v2)" in launch.memory_limit_text(config)


def test_without_a_memory_controller_the_limits_stay_per_process(fake_cgroup: Path, tmp_path: Path) -> None:
    (fake_cgroup / "cgroup.controllers").write_text("cpu pids\n")
    config = ShellConfig(workspace=str(tmp_path))
    assert launch.cgroup_parent() == (None, "no memory controller in the cgroup v2 hierarchy")
    assert "per process only" in launch.memory_limit_text(config)
    prepared = Launch("none", config, str(tmp_path)).prepare(
        "/bin/true", ["/bin/true"], str(tmp_path), {}, True
    )
    assert prepared.cgroup is None and prepared.pass_fds == ()
