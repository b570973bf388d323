"""Which folders may be a workspace: project folders yes; system trees, homes and dot-folders no."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config.workspace import workspace_problem

HOME = Path("/home/alice")


@pytest.mark.parametrize(
    "folder",
    [
        "/",
        "/usr",
        "/usr/local",
        "/usr/local/bin",
        "/etc",
        "/etc/ssh",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/boot",
        "/dev/shm",
        "/proc/self",
        "/sys/kernel",
        "/run/user",
        "/var",
        "/var/lib/dpkg",
        "/var/log",
        "/var/tmp",
        "/var/www",
        "/tmp",
        "/home",
        "/opt",
        "/srv",
        "/mnt",
        "/home/alice",
        "/home/alice/.ssh",
        "/home/alice/.config/app",
        "/home/alice/.local/bin",
        "/home/bob",
        "/home/bob/.aws",
        "/root",
        "/root/.ssh",
        "/root/.cache/x",
    ],
)
def test_refused(folder: str) -> None:
    assert workspace_problem(Path(folder), home=HOME)


@pytest.mark.parametrize(
    "folder",
    [
        "/home/alice/project",
        "/home/alice/code/.hidden-inside-a-project",
        "/home/bob/work",
        "/root/project",
        "/tmp/job-1",
        "/var/tmp/scratch",
        "/var/www/site",
        "/opt/myapp",
        "/srv/data",
        "/mnt/disk/project",
        "/work/main",
    ],
)
def test_allowed(folder: str) -> None:
    assert workspace_problem(Path(folder), home=HOME) is None


def test_the_reason_names_what_is_wrong() -> None:
    assert "/usr" in str(workspace_problem(Path("/usr/local"), home=HOME))
    assert "dot-folder" in str(workspace_problem(Path("/home/alice/.ssh"), home=HOME))
    assert "home folder" in str(workspace_problem(HOME, home=HOME))
