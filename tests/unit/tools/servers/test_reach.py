"""The one check for Starweave's own reads on the model's behalf: nothing a sandboxed command could
not read (hidden paths, the private trees, files its permissions refuse), with real files, real
capabilities and real threads."""

from __future__ import annotations

import os
import secrets
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from starweave.errors import PolicyViolation
from starweave.tools.confine.paths import PathGuard
from starweave.tools.confine.privilege import effective_capabilities, sandbox_privileges
from starweave.tools.confine.reach import check_model_read, open_for_model, sandbox_read_reason

AS_ROOT = os.geteuid() == 0
OTHER_UID = 12345


def read_all(guard: PathGuard, path: str, *, confined: bool = False) -> bytes:
    _real, fd = open_for_model(guard, path, confined=confined)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


@pytest.fixture
def run_secret() -> Iterator[Path]:
    """An ordinary-looking file in a folder of /run, which the sandboxes hide whole (root only)."""
    if not AS_ROOT or not os.access("/run", os.W_OK):
        pytest.skip("needs root to create a folder in /run")
    folder = Path("/run") / f"starweave-test-{secrets.token_hex(4)}"
    folder.mkdir()
    (folder / "notes.txt").write_text("run secret\n")
    try:
        yield folder / "notes.txt"
    finally:
        shutil.rmtree(folder)


def test_the_private_trees_are_refused_unless_a_root_is_bound_back(tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    for path in ("/tmp/x", "/var/tmp/x", "/dev/shm/x", "/proc/meminfo", "/proc/1/status"):
        reason = sandbox_read_reason(path, [ws])
        assert reason is not None and "do not share" in reason, path
    # A workspace or read root inside a private tree is bound back into the sandbox.
    assert sandbox_read_reason(f"{ws}/notes.txt", [ws]) is None
    assert sandbox_read_reason(str(tmp_path / "other.txt"), [ws]) is not None
    # A root above a private tree does not bring it back: bubblewrap still mounts its own /tmp.
    assert sandbox_read_reason("/tmp/x", [ws, "/"]) is not None


def test_hidden_paths_are_refused_and_ordinary_system_files_pass(tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    shadow = sandbox_read_reason("/etc/shadow", [ws])
    assert shadow is not None and "hidden from sandboxed commands" in shadow
    inside = sandbox_read_reason("/root/anything.txt", [ws])
    assert inside is not None and "(inside /root)" in inside
    assert sandbox_read_reason("/usr/lib/os-release", [ws]) is None
    # A read root is never hidden, even inside a hidden folder.
    assert sandbox_read_reason("/root/project/a.txt", [ws, "/root/project"]) is None


def test_a_masked_file_with_an_ordinary_name_is_refused(tmp_path: Path, run_secret: Path) -> None:
    guard = PathGuard(str(tmp_path / "ws"))
    with pytest.raises(PolicyViolation, match=r"is refused: .*notes\.txt is hidden from sandboxed commands"):
        check_model_read(guard, str(run_secret), confined=False)
    # The name rules alone let it through: the refusal is the sandbox's view.
    assert guard.check_read(str(run_secret)) == str(run_secret)


def test_secrets_are_refused_before_their_existence_is_looked_at(tmp_path: Path) -> None:
    guard = PathGuard(str(tmp_path / "ws"))
    for path in ("/etc/shadow", "/root/.aws/credentials", "/root/.config/gh/hosts.yml", "/root/nothing-here"):
        with pytest.raises(PolicyViolation, match="is refused"):
            open_for_model(guard, path, confined=False)


def test_an_ordinary_file_is_read_and_a_missing_one_is_not_found(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    guard = PathGuard(str(ws))
    assert read_all(guard, "notes.txt", confined=True) == b"hello\n"
    assert b"ID=" in read_all(guard, "/usr/lib/os-release")  # visible to the sandbox, outside the roots
    with pytest.raises(FileNotFoundError):
        open_for_model(guard, "missing.txt", confined=True)


def test_a_file_its_mode_refuses_is_refused_even_to_root(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    locked = ws / "locked.txt"
    locked.write_text("no one\n")
    locked.chmod(0)
    guard = PathGuard(str(ws))
    with pytest.raises(PolicyViolation, match=r"may not read .*locked\.txt \(permission denied\)"):
        open_for_model(guard, "locked.txt", confined=True)
    if AS_ROOT:
        assert locked.read_text() == "no one\n"  # Starweave's own privileges would have read it


@pytest.mark.skipif(not AS_ROOT, reason="needs root to give a file to another user")
def test_another_users_private_file_is_refused_to_root(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    private = ws / "theirs.txt"
    private.write_text("their secret\n")
    private.chmod(0o600)
    os.chown(private, OTHER_UID, OTHER_UID)
    guard = PathGuard(str(ws))
    with pytest.raises(PolicyViolation, match="permission denied"):
        open_for_model(guard, "theirs.txt", confined=True)
    private.chmod(0o644)
    assert read_all(guard, "theirs.txt", confined=True) == b"their secret\n"


def test_capabilities_are_lowered_in_this_thread_only_and_come_back(tmp_path: Path) -> None:
    before = effective_capabilities()
    lowered = threading.Event()
    release = threading.Event()
    seen: list[int] = []

    def worker() -> None:
        with sandbox_privileges():
            seen.append(effective_capabilities())
            lowered.set()
            release.wait(30)
        seen.append(effective_capabilities())

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert lowered.wait(30)
        # While the worker reads as a sandboxed command, this thread keeps what it had.
        assert effective_capabilities() == before
    finally:
        release.set()
        thread.join(30)
    assert seen == [0, before]
    with pytest.raises(RuntimeError), sandbox_privileges():
        raise RuntimeError("inside")
    assert effective_capabilities() == before
