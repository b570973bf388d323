"""Landlock as a normal user, with real commands: no mount, PID or IPC namespace, so the supervisor
makes chmod, chown, utimes and xattr changes itself (inside the workspace only), and the seccomp
filter keeps the command from the user's other processes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.as_user import give_to_user, run_as_user, user_folder


@pytest.fixture
def place() -> Iterator[tuple[Path, Path]]:
    """A workspace and, next to it, a folder outside with a file, both the user's own."""
    base = user_folder()
    workspace, outside = base / "ws", base / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "notes.txt").write_text("public\n")
    give_to_user(workspace, outside)
    yield workspace, outside
    shutil.rmtree(base, ignore_errors=True)


def test_metadata_changes_in_the_workspace_work_as_in_bash(place: tuple[Path, Path]) -> None:
    workspace, _ = place
    script = (
        "touch a && chmod +x a && test -x a && echo executable; "
        "mkdir -p d/e && touch -d 2001-01-01 d/e/f && date -r d/e/f +%Y; "
        "find . -type f -exec chmod 640 {} + && stat -c %a a; "
        'python3 -c \'import os; os.setxattr("a", "user.k", b"v"); print(os.getxattr("a", "user.k"))\'; '
        "tar cf t.tar d && mkdir x && tar xpf t.tar -C x && date -r x/d/e/f +%Y; "
        "cp -p a b && stat -c %a b; chown $(id -u) b && echo owned; "
        "ln -s a l && touch -h -d 2002-02-02 l && stat -c %y l | cut -c1-4; chmod 644 l && stat -c %a a"
    )
    [result] = run_as_user(workspace, [script])
    assert result["exit_code"] == 0, result
    assert result["stdout"].split() == [
        "executable", "2001", "640", "b'v'", "2001", "640", "owned", "2002", "644",
    ]  # fmt: skip


def test_metadata_changes_outside_are_refused_and_change_nothing(place: tuple[Path, Path]) -> None:
    workspace, outside = place
    notes = outside / "notes.txt"
    before = os.lstat(notes), os.lstat(outside)
    commands = [
        f"chmod 777 {notes} {outside}",
        f"touch {notes}; touch -d 2001-01-01 {notes}; chown $(id -u) {notes}",
        f"ln -s {notes} l; chmod 777 l; touch l",
        f"python3 -c 'import os; fd = os.open(\"{notes}\", os.O_RDONLY); os.utime(fd, (0, 0))'",
        f'python3 -c \'import os; os.setxattr("{notes}", "user.k", b"v")\'',
        f'python3 -c \'import os; fd = os.open("{notes}", os.O_PATH); '
        'os.chmod("/proc/self/fd/%d" % fd, 0o777)\'',
    ]
    results = run_as_user(workspace, commands)
    for line, result in zip(commands, results, strict=True):
        assert result["exit_code"] != 0 or "Read-only file system" in result["stderr"], (line, result)
    assert "Read-only file system" in results[0]["stderr"]
    after = os.lstat(notes), os.lstat(outside)
    for old, new in zip(before, after, strict=True):
        assert (stat.S_IMODE(old.st_mode), old.st_uid, old.st_mtime_ns) == (
            stat.S_IMODE(new.st_mode),
            new.st_uid,
            new.st_mtime_ns,
        )
    assert os.listxattr(notes) == []


def test_the_users_other_processes_are_out_of_reach(place: tuple[Path, Path]) -> None:
    workspace, _ = place
    sibling = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "120"]
        if os.geteuid() == 0
        else ["sleep", "120"]
    )
    try:
        pid = sibling.pid
        before = _settings(pid)
        commands = [
            f"renice -n 19 -p {pid}",
            f"prlimit --pid {pid} --nofile=8:8 --cpu=1:1",
            f"taskset -p 1 {pid}",
            f"ionice -c 3 -p {pid}",
            f"kill -STOP {pid}",
            "renice -n 19 -u $(id -u)",
            "ipcmk -Q && ipcmk -S 1 && ipcmk -M 4096",
        ]
        results = run_as_user(workspace, commands)
        for line, result in zip(commands, results, strict=True):
            assert result["exit_code"] != 0, (line, result)
        assert _settings(pid) == before
        assert _state(pid) != "T" and sibling.poll() is None  # not stopped, not killed
    finally:
        sibling.kill()
        sibling.wait()


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _state(pid: int) -> str:
    return _stat(pid)[0]


def _settings(pid: int) -> tuple[object, ...]:
    """What another process could change about ``pid``: nice value, scheduling policy, CPU affinity
    and resource limits."""
    policy, affinity = os.sched_getscheduler(pid), os.sched_getaffinity(pid)
    return _stat(pid)[16], policy, affinity, Path(f"/proc/{pid}/limits").read_text()
