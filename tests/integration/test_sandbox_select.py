"""SHELL.SANDBOX for real: auto takes bubblewrap, falls back to Landlock when bubblewrap does not
work (a stub ``bwrap`` first on PATH), and refuses to start when neither works (bubblewrap off PATH
and Landlock's system calls answered ENOSYS by a seccomp filter in a child process) unless
SANDBOX is none, which is then said plainly."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.errors import SandboxUnavailable
from starweave.tools.sandbox.choice import (
    choose_sandbox,
    current_confinement,
    ensure_sandbox,
    probe_bwrap_sync,
    probe_landlock_sync,
)
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.session import ShellSession

# Runs its argv with Landlock's three system calls (444-446) failing with ENOSYS, as on a kernel
# without Landlock: a classic BPF filter installed with no_new_privs, inherited across execve.
NO_LANDLOCK = r"""
import ctypes, os, struct, sys
insns = [(0x20, 0, 0, 0)]
for nr in (444, 445, 446):
    insns += [(0x15, 0, 1, nr), (0x06, 0, 0, 0x00050000 | 38)]
insns.append((0x06, 0, 0, 0x7FFF0000))
prog = b"".join(struct.pack("=HBBI", *i) for i in insns)
buf = ctypes.create_string_buffer(prog, len(prog))
fprog = ctypes.create_string_buffer(struct.pack("=HxxxxxxQ", len(insns), ctypes.addressof(buf)))
libc = ctypes.CDLL(None, use_errno=True)
ul = ctypes.c_ulong
assert libc.prctl(ul(38), ul(1), ul(0), ul(0), ul(0)) == 0
assert libc.prctl(ul(22), ul(2), ul(ctypes.addressof(fprog)), ul(0), ul(0)) == 0, ctypes.get_errno()
os.execvpe(sys.argv[1], sys.argv[1:], os.environ)
"""


@pytest.fixture
def broken_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``bwrap`` first on PATH that fails like one without user namespaces."""
    folder = tmp_path / "bin"
    folder.mkdir()
    stub = folder / "bwrap"
    stub.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    return stub


def _needs(kind: str) -> None:
    ok, detail = probe_bwrap_sync(False) if kind == "bwrap" else probe_landlock_sync(False)
    if not ok:
        pytest.skip(f"{kind} does not work here: {detail}")


def test_auto_takes_bubblewrap_when_it_works(tmp_path: Path) -> None:
    _needs("bwrap")
    choice = choose_sandbox(ShellConfig(workspace=str(tmp_path)))
    assert choice.kind == "bwrap" and choice.confined
    assert current_confinement() == {"sandbox": "bwrap", "command_confinement": choice.describe()}


async def test_auto_falls_back_to_landlock_when_bwrap_fails(broken_bwrap: Path, tmp_path: Path) -> None:
    _needs("landlock")
    ok, detail = probe_bwrap_sync(False)
    assert not ok and "No permissions to create new namespace" in detail
    shell = ShellConfig(workspace=str(tmp_path))
    choice = await ensure_sandbox(shell)
    assert choice.kind == "landlock" and choice.landlock_abi >= 1 and "Landlock ABI" in choice.describe()
    session = ShellSession(shell, sandbox=choice.kind)
    result = await run_command("touch made.txt && cat /proc/self/status", session=session, timeout=30)
    assert result["success"], result
    assert "Seccomp:\t2" in result["stdout"] and (tmp_path / "made.txt").exists()


async def test_required_bwrap_that_does_not_work_is_a_start_error(broken_bwrap: Path, tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as caught:
        await ensure_sandbox(ShellConfig(workspace=str(tmp_path), sandbox="bwrap"))
    message = str(caught.value)
    assert "\n" not in message and "SHELL.SANDBOX is bwrap" in message
    assert "apt-get install bubblewrap" in message and "SHELL.SANDBOX: none" in message


async def test_none_runs_unconfined_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="starweave.tools.sandbox.choice"):
        choice = await ensure_sandbox(ShellConfig(workspace=str(tmp_path), sandbox="none"))
    assert choice.kind == "none" and not choice.confined
    assert "NOTHING confines the model's shell commands" in choice.describe()
    assert "NOTHING confines" in caplog.text
    assert current_confinement()["sandbox"] == "none"
    unrestricted = choose_sandbox(ShellConfig(workspace=str(tmp_path), mode="unrestricted"))
    assert unrestricted.kind == "none" and "MODE is unrestricted" in unrestricted.describe()
    # What it says: bash with the limits only, free to write anywhere the user may.
    session = ShellSession(ShellConfig(workspace=str(tmp_path / "ws"), sandbox="none"), sandbox="none")
    result = await run_command(f"echo free > {tmp_path}/outside.txt", session=session, timeout=30)
    assert result["success"] and (tmp_path / "outside.txt").read_text() == "free\n", result


def _without_any_sandbox(tmp_path: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with no bwrap on PATH and Landlock answering ENOSYS."""
    folder = tmp_path / "nobwrap"
    folder.mkdir(exist_ok=True)
    for tool in ("python3", "true", "sh"):  # what the probes and the launcher may look up
        real = shutil.which(tool)
        if real and not (folder / tool).exists():
            (folder / tool).symlink_to(real)
    clean = {"PATH": str(folder), "HOME": str(tmp_path), "LANG": "C.UTF-8", **env}
    return subprocess.run(
        [sys.executable, "-c", NO_LANDLOCK, *argv],
        capture_output=True,
        text=True,
        env=clean,
        cwd=tmp_path,  # no ./config folder
        timeout=120,
    )


CHOOSE = (
    "import sys\n"
    "from starweave.config.models import ShellConfig\n"
    "from starweave.tools.sandbox.choice import choose_sandbox, SandboxUnavailable\n"
    "try:\n"
    "    print(choose_sandbox(ShellConfig(workspace=sys.argv[1], sandbox=sys.argv[2])).describe())\n"
    "except SandboxUnavailable as exc:\n"
    "    print('REFUSED', exc)\n"
)


def test_auto_refuses_to_start_when_neither_sandbox_works(tmp_path: Path) -> None:
    repo = os.pathsep.join([str(Path(__file__).resolve().parents[2]), *filter(None, sys.path)])
    out = _without_any_sandbox(
        tmp_path, [sys.executable, "-c", CHOOSE, str(tmp_path), "auto"], PYTHONPATH=repo
    )
    assert out.stdout.startswith("REFUSED SHELL.SANDBOX is auto but neither bubblewrap nor Landlock"), out
    assert "bwrap is not installed" in out.stdout and "Landlock" in out.stdout
    assert "set SHELL.SANDBOX: none" in out.stdout
    out = _without_any_sandbox(
        tmp_path, [sys.executable, "-c", CHOOSE, str(tmp_path), "none"], PYTHONPATH=repo
    )
    assert out.stdout.startswith("none: NOTHING confines"), out


def test_the_cli_reports_a_missing_sandbox_at_start_in_one_line(tmp_path: Path) -> None:
    starweave = Path(sys.executable).with_name("starweave")
    if not starweave.exists():
        pytest.skip("the starweave command is not installed next to this Python")
    ws = tmp_path / "ws"
    out = _without_any_sandbox(
        tmp_path,
        [str(starweave), "mcp", "serve", "bash", "--workspace", str(ws)],
        STARWEAVE_SYSTEM__SHELL__SANDBOX="landlock",
    )
    assert out.returncode == 2, out
    lines = [line for line in out.stderr.splitlines() if line.strip() and not line.startswith("warning:")]
    assert len(lines) == 1, out.stderr
    assert "SHELL.SANDBOX is landlock but Landlock does not work here" in lines[0]
    assert "SHELL.SANDBOX: none" in lines[0] and "Traceback" not in out.stderr
    assert not ws.exists() or not any(ws.iterdir())


COVERED_PROC = (
    'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$0" -c "$1" "$2"'
)
UNSHARE = ["unshare", "--mount", "--propagation", "private"]
RUN_IN_BWRAP = (
    "import asyncio, sys\n"
    "from starweave.config.models import ShellConfig\n"
    "from starweave.tools.sandbox.launch import known_bwrap_variants\n"
    "from starweave.tools.servers.shell.runner import run_command\n"
    "from starweave.tools.sandbox.choice import choose_sandbox\n"
    "shell = ShellConfig(workspace=sys.argv[1], sandbox='bwrap')\n"
    "choice = choose_sandbox(shell)\n"
    "from starweave.tools.servers.shell.session import ShellSession\n"
    "session = ShellSession(shell, sandbox=choice.kind)\n"
    "result = asyncio.run(run_command('cat /proc/self/status', session=session, timeout=30))\n"
    "caps = [l for l in result['stdout'].splitlines() if l.startswith(('CapEff', 'CapBnd'))]\n"
    "print(choice.kind, list(known_bwrap_variants().values()), caps)\n"
)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
def test_root_keeps_bubblewrap_where_a_user_namespace_cannot_mount_proc(tmp_path: Path) -> None:
    # As in many containers: part of /proc is covered, so a new user namespace may not mount one.
    _needs("bwrap")
    out = subprocess.run(
        [*UNSHARE, "sh", "-c", COVERED_PROC, sys.executable, RUN_IN_BWRAP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(" [")[0] == "bwrap", out.stdout
    assert "[False]" in out.stdout  # the initial user namespace, every capability dropped
    assert "CapEff:\\t0000000000000000" in out.stdout and "CapBnd:\\t0000000000000000" in out.stdout
