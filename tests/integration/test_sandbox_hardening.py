"""Holes the real shell's hostile suite found, closed in every sandbox, with real commands: kernel
settings under /proc are read-only for root inside bubblewrap, the stack has a ceiling, and a unix
datagram socketpair (which sends to any path without ``socket``) is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.shell_sessions import SANDBOXES, run, session_for


@pytest.mark.skipif(os.geteuid() != 0, reason="only root passes the checks of /proc/sys")
async def test_root_cannot_write_kernel_settings_inside_bubblewrap(tmp_path: Path) -> None:
    session = session_for("bwrap", tmp_path)
    result = await run(
        session,
        "v=$(cat /proc/sys/kernel/core_pattern); printf '%s\\n' \"$v\" > /proc/sys/kernel/core_pattern; "
        "echo 1000 > /proc/self/oom_score_adj; cat /proc/self/oom_score_adj",
    )
    assert result["stderr"].count("Read-only file system") == 2, result
    assert result["stdout"].strip() == "1000"  # the launcher's own setting was made before


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_the_stack_has_a_ceiling_at_the_memory_limit(kind: str, tmp_path: Path) -> None:
    session = session_for(kind, tmp_path, max_memory_mb=256)
    result = await run(
        session, "ulimit -Hs; ulimit -s; ulimit -s unlimited || echo refused; ulimit -s 262144"
    )
    lines = result["stdout"].split()
    assert lines[0] == str(256 * 1024) and lines[-1] == "refused", result
    assert int(lines[1]) <= 256 * 1024  # the soft limit (threads' default stack) is not raised


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_datagram_socketpairs_are_refused_stream_ones_work(kind: str, tmp_path: Path) -> None:
    session = session_for(kind, tmp_path)
    code = (
        "import socket\n"
        "a, b = socket.socketpair()\na.send(b'hi')\nprint(b.recv(2).decode())\n"
        "s, t = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)\nprint('seqpacket')\n"
        "for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):\n"
        "    try:\n        socket.socketpair(socket.AF_UNIX, kind)\n        print('allowed', kind)\n"
        "    except PermissionError:\n        print('refused')\n"
    )
    (tmp_path / "p.py").write_text(code)
    result = await run(session, "python3 p.py")
    assert result["stdout"].split() == ["hi", "seqpacket", "refused", "refused"], result


async def test_a_secret_removed_while_the_sandbox_starts_does_not_fail_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hidden file deleted between the search and bubblewrap's mount: bubblewrap cannot create
    the mount point in the read-only root and fails before the command starts; it runs again."""
    import tempfile

    from starweave.tools.confine.hidden import HiddenPath
    from starweave.tools.sandbox import launch as launch_module

    session = session_for("bwrap", tmp_path)
    outside = Path(tempfile.mkdtemp(prefix="starweave-race-", dir="/var/tmp"))
    secret = outside / ".env"
    secret.write_text("TOKEN=x\n")
    monkeypatch.setattr(launch_module, "hidden_paths", lambda roots: [HiddenPath(str(secret), False)])
    prepare = launch_module.Launch.prepare
    calls: list[int] = []

    def racing_prepare(self: launch_module.Launch, *args: object, **kwargs: object) -> object:
        prepared = prepare(self, *args, **kwargs)  # type: ignore[arg-type]
        calls.append(1)
        secret.unlink(missing_ok=True)  # removed after the search, before bubblewrap mounts
        return prepared

    monkeypatch.setattr(launch_module.Launch, "prepare", racing_prepare)
    try:
        result = await run(session, "echo ran; touch marker")
    finally:
        secret.unlink(missing_ok=True)
        os.rmdir(outside)
    assert len(calls) == 2, result  # the first start failed in bubblewrap's setup
    assert result["exit_code"] == 0 and result["stdout"] == "ran\n", result
    assert (tmp_path / "marker").exists()
