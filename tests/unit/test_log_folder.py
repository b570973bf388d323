"""The log folder held open: a model's links and FIFOs in it never steer Starweave's own writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from starweave.config.known_workspaces import remember_workspace
from starweave.errors import ConfigError
from starweave.log_folder import LogFolder, read_log_file, write_log_file
from starweave.session.logs import SessionLogs


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "notes.txt").write_text("precious\n")
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    remember_workspace(folder)
    return folder


def test_a_symlink_inside_a_workspace_on_the_way_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "logs").symlink_to(outside)
    with pytest.raises(ConfigError, match=r"goes through .*/ws/logs, a symlink inside the workspace"):
        SessionLogs(workspace / "logs", "task")
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]


def test_a_users_symlink_outside_workspaces_is_followed(tmp_path: Path, workspace: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    logs = SessionLogs(tmp_path / "link", "task")
    logs.write_markdown("# t\n")
    assert (tmp_path / "real" / "task" / "output.md").read_text() == "# t\n"


def test_planted_links_and_fifos_under_log_names_are_replaced_not_followed(
    workspace: Path, outside: Path
) -> None:
    folder = workspace / "logs" / "task"
    folder.mkdir(parents=True)
    (folder / "output.md").symlink_to(outside / "notes.txt")
    (folder / "result.json").symlink_to(outside / "notes.txt")
    (folder / "response.log").symlink_to(outside / "notes.txt")
    os.mkfifo(folder / "request.log")
    logs = SessionLogs(workspace / "logs", "task")
    logs.request_log.write({"step": 1})  # a FIFO would hang an ordinary open
    logs.response_log.write({"step": 1})
    logs.write_result({"status": "ok"})
    logs.write_markdown("# trajectory\n")
    assert (outside / "notes.txt").read_text() == "precious\n"
    for name in ("output.md", "result.json", "response.log", "request.log"):
        assert (folder / name).is_file() and not (folder / name).is_symlink(), name
    assert logs.responses() == [{"step": 1}]


def test_a_folder_swapped_for_a_symlink_mid_run_does_not_redirect_writes(
    workspace: Path, outside: Path
) -> None:
    logs = SessionLogs(workspace / "logs", "task")
    logs.request_log.write({"step": 1})
    (workspace / "logs" / "task").rename(workspace / "logs" / "old")
    (workspace / "logs" / "task").symlink_to(outside)
    logs.request_log.write({"step": 2})
    logs.write_result({"status": "ok"})
    logs.write_markdown("# t\n")
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]
    moved = workspace / "logs" / "old"
    assert sorted(p.name for p in moved.iterdir()) == ["output.md", "request.log", "result.json"]
    assert (moved / "request.log").read_text().count("step") == 2


def test_the_folder_descriptor_is_released(tmp_path: Path) -> None:
    folder = LogFolder(tmp_path / "a" / "b")
    fd = folder.fd
    folder.close()
    with pytest.raises(OSError):
        os.fstat(fd)


def test_screenshots_replace_planted_links_and_are_never_read_through_one(
    workspace: Path, outside: Path
) -> None:
    shots = workspace / "logs" / "task"
    shots.mkdir(parents=True)
    (shots / "action_step1.png").symlink_to(outside / "notes.txt")
    write_log_file(shots / "action_step1.png", b"png")
    assert (outside / "notes.txt").read_text() == "precious\n"
    assert read_log_file(shots / "action_step1.png") == b"png"
    # A link planted where a screenshot is expected is not read (its target could be a secret that
    # would be sent to a visual model): it is removed and the screenshot counts as missing.
    (shots / "action_step2.png").symlink_to(outside / "notes.txt")
    with pytest.raises(FileNotFoundError):
        read_log_file(shots / "action_step2.png")
    with pytest.raises(FileNotFoundError):
        read_log_file(workspace / "logs" / "no-such-task" / "x.png")
    assert not (workspace / "logs" / "no-such-task").exists()
