"""The log folder held open: a model's links and FIFOs in it never steer Starweave's own writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from helpers import as_user

from starweave.config.known_workspaces import remember_workspace
from starweave.errors import ConfigError
from starweave.log_folder import LogFolder, LogWriteError, read_log_file, write_log_file
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


# A log folder the model broke mid-run: the run keeps its logs and never crashes.


def test_a_folder_removed_mid_run_is_made_again_and_written(workspace: Path) -> None:
    folder = workspace / "logs" / "task"
    logs = LogFolder(folder)
    logs.append("response.log", b"one\n")
    shutil.rmtree(workspace / "logs")  # the model's `rm -rf logs`
    logs.append("response.log", b"two\n")
    assert (folder / "response.log").read_bytes() == b"two\n"
    shutil.rmtree(workspace / "logs")
    assert logs.replace("result.json", b"{}\n") == folder / "result.json"
    assert (folder / "result.json").read_bytes() == b"{}\n"
    shutil.rmtree(workspace / "logs")
    assert logs.read("response.log") is None  # gone with the folder; not an error
    logs.close()


def test_folders_planted_under_log_names_are_moved_aside(workspace: Path) -> None:
    folder = workspace / "logs" / "task"
    logs = SessionLogs(workspace / "logs", "task")
    for name in ("request.log", "output.md", "result.json"):
        (folder / name).mkdir()  # empty: removed
    (folder / "response.log").mkdir()
    (folder / "response.log" / "kept.txt").write_text("the model's\n")  # not empty: renamed aside
    logs.request_log.write({"step": 1})
    logs.response_log.write({"step": 1})
    logs.write_result({"status": "ok"})
    logs.write_markdown("# t\n")
    for name in ("request.log", "response.log", "output.md", "result.json"):
        assert (folder / name).is_file(), name
    assert logs.responses() == [{"step": 1}]
    [aside] = [p for p in folder.iterdir() if p.name.startswith(".response.log.not-a-log-")]
    assert (aside / "kept.txt").read_text() == "the model's\n"


def test_a_symlink_planted_where_the_removed_folder_was_is_refused(
    workspace: Path, outside: Path, caplog: pytest.LogCaptureFixture
) -> None:
    logs = SessionLogs(workspace / "logs", "task")
    logs.request_log.write({"step": 1})
    shutil.rmtree(workspace / "logs" / "task")
    (workspace / "logs" / "task").symlink_to(outside)
    with pytest.raises(LogWriteError, match=r"cannot use request\.log .*a symlink inside the workspace"):
        logs.folder.append("request.log", b"x\n")
    with pytest.raises(OSError):  # one error type the callers handle already
        logs.write_result({"status": "ok"})
    # A step's log line that cannot be written is one warning, not the end of the run.
    logs.request_log.write({"step": 2})
    logs.request_log.write({"step": 3})
    warned = [r for r in caplog.records if "request.log" in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelname == "WARNING"
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]


# Run as an unprivileged user: root is never refused by a folder's permissions.
_CHMODDED = """
import os, sys
from pathlib import Path
from starweave.log_folder import LogFolder
top = Path(sys.argv[1])
logs = LogFolder(top / "logs" / "task")
logs.append("response.log", b"one\\n")
os.chmod(top / "logs" / "task", 0)
os.chmod(top / "logs", 0)
logs.append("response.log", b"two\\n")
logs.replace("result.json", b"{}\\n")
logs.close()
again = LogFolder(top / "logs" / "task")  # through a parent without rights, by path
again.append("response.log", b"three\\n")
print(oct(os.stat(top / "logs" / "task").st_mode & 0o777), oct(os.stat(top / "logs").st_mode & 0o777))
"""


def _run_as_user(code: str, top: Path) -> str:
    """Run ``code`` with ``top`` as its argument, as ``nobody`` when root (else as this user); its
    output. Skips the test where no unprivileged user can run this Python."""
    python = as_user._interpreter()
    if python is None:
        pytest.skip("no Python of this version that an unprivileged user can run")
    argv = [python, "-c", code, str(top)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv is not installed: cannot run as an unprivileged user")
        argv = [setpriv, f"--reuid={as_user.NOBODY}", f"--regid={as_user.NOBODY}", "--clear-groups", *argv]
    site = sysconfig.get_paths()["purelib"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{as_user.REPO}:{site}", "XDG_STATE_HOME": str(top)}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_folder_whose_rights_were_taken_gets_them_back() -> None:
    top = as_user.user_folder()
    try:
        out = _run_as_user(_CHMODDED, top)
        assert out.split() == ["0o700", "0o700"]  # the owner's rights only, nothing more
        assert (top / "logs" / "task" / "response.log").read_bytes() == b"one\ntwo\nthree\n"
        assert (top / "logs" / "task" / "result.json").read_bytes() == b"{}\n"
    finally:
        shutil.rmtree(top)  # as root; the user's own run left every folder readable again


_NOT_MINE = """
import os, sys
from pathlib import Path
from starweave.log_folder import LogFolder
try:
    LogFolder(Path(sys.argv[1]) / "other" / "task")
except PermissionError:
    print("refused")
"""


def test_a_folder_of_someone_else_keeps_its_permissions() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to make a folder the unprivileged user does not own")
    top = as_user.user_folder()
    try:
        (top / "other").mkdir(mode=0o700)  # root's, in the user's folder
        assert _run_as_user(_NOT_MINE, top).split() == ["refused"]
        assert (top / "other").stat().st_mode & 0o777 == 0o700
        assert not (top / "other" / "task").exists()
    finally:
        shutil.rmtree(top)
