"""The sandbox is the boundary: each property proved from inside a real bubblewrap or Landlock
sandbox, by a workspace script the model runs with bash, through run_command.

One probe script per sandbox records what it can and cannot do; the tests below read its report.
Runs as root here (CI and many containers do); the unprivileged runs are in the hostile suite.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import secrets
import shutil
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.sandbox.choice import probe_bwrap_sync, probe_landlock_sync
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.session import ShellSession

AS_ROOT = os.geteuid() == 0
CANARY = "starweave-canary-" + secrets.token_hex(8)
SETUID_BINARY = next((p for p in ("/usr/bin/passwd", "/usr/bin/su", "/bin/mount") if os.path.exists(p)), None)

PROBE = r"""
import ctypes, json, os, socket, stat, subprocess, sys
out = {}
def attempt(name, fn):
    try:
        out[name] = ["ok", fn()]
    except OSError as exc:
        out[name] = ["denied", exc.errno]
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
out["status"] = {k: v.strip() for k, v in status.items() if k.startswith(("Cap", "NoNewPrivs", "Seccomp"))}
out["uids"] = list(os.getresuid())
libc = ctypes.CDLL(None, use_errno=True)
def remount_rw():
    if libc.mount(None, b"/", None, ctypes.c_ulong(32 | 4096), None) != 0:  # MS_REMOUNT|MS_BIND, rw
        raise OSError(ctypes.get_errno(), "mount")
attempt("remount_rw", remount_rw)
out["mount_cmd"] = subprocess.run(["mount", "-o", "remount,rw", "/"], capture_output=True).returncode
attempt("mknod_char", lambda: os.mknod("memdev", 0o600 | stat.S_IFCHR, os.makedev(1, 1)))
attempt("mknod_block", lambda: os.mknod("blkdev", 0o600 | stat.S_IFBLK, os.makedev(8, 0)))
attempt("mkfifo", lambda: os.mkfifo("fifo"))
attempt("mknod_socket", lambda: os.mknod("sock", 0o600 | stat.S_IFSOCK))
def bind_socketpair():
    a, b = socket.socketpair()
    try:
        a.bind("bound.sock")
    finally:
        a.close()
        b.close()
attempt("bind_socketpair", bind_socketpair)
def use_socketpair():
    a, b = socket.socketpair()
    a.sendall(b"hi")
    got = b.recv(2).decode()
    a.close()
    b.close()
    return got
attempt("socketpair", use_socketpair)
attempt("memfd", lambda: os.close(os.memfd_create("m")))
def shmget():
    if libc.shmget(0, ctypes.c_size_t(1 << 20), 0o1600) < 0:
        raise OSError(ctypes.get_errno(), "shmget")
attempt("shmget", shmget)
subprocess.run(["cp", "/bin/bash", "shell"])
attempt("chmod_setuid", lambda: os.chmod("shell", 0o4755))
attempt("chmod_setgid", lambda: os.chmod("shell", 0o2755))
attempt("create_setuid", lambda: os.close(os.open("created", os.O_CREAT | os.O_WRONLY, 0o6755)))
if sys.argv[3] != "-":
    subprocess.run(["cp", "-p", sys.argv[3], "copied"], capture_output=True)
subprocess.run(["tar", "-xpf", "setuid.tar"], capture_output=True)
attempt("chown_other", lambda: os.chown("shell", 12345, 12345))
attempt("proc_list", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
attempt("parent_environ", lambda: open(f"/proc/{sys.argv[1]}/environ", "rb").read().decode("latin-1"))
attempt("parent_cmdline", lambda: open(f"/proc/{sys.argv[1]}/cmdline", "rb").read().decode("latin-1"))
attempt("shadow", lambda: open("/etc/shadow").read())
for i, path in enumerate(sys.argv[4].split(",")):
    attempt(f"secret{i}", lambda: open(path).read())
out["env"] = dict(os.environ)
attempt("write_home", lambda: open(os.path.join(os.environ["HOME"], "f"), "w").write("x"))
attempt("write_tmpdir", lambda: open(os.path.join(os.environ["TMPDIR"], "f"), "w").write("x"))
for i, path in enumerate(["/etc/starweave-sbx", "/usr/starweave-sbx", "/var/tmp/starweave-sbx", sys.argv[5]]):
    attempt(f"write_out{i}", lambda: open(path, "w").write("x"))
attempt("chmod_outside", lambda: os.chmod(sys.argv[6], 0o777))
attempt("utime_outside", lambda: os.utime(sys.argv[6], (0, 0)))
attempt("tcp_host", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5).close())
attempt("unix_socket", lambda: socket.socket(socket.AF_UNIX).close())
def new_userns():
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare")
attempt("new_userns", new_userns)
import resource
out["limits"] = {n: resource.getrlimit(getattr(resource, n))[0] for n in
                 ("RLIMIT_DATA", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE")}
print(json.dumps(out))
"""


@dataclass
class Report:
    kind: str
    workspace: Path
    outside: Path
    result: dict[str, Any]
    data: dict[str, Any]

    def denied(self, name: str) -> bool:
        return self.data[name][0] == "denied"


def _setuid_tar(path: Path) -> None:
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("from-tar")
        info.mode = 0o4755
        info.size = 4
        tar.addfile(info, io.BytesIO(b"#!/x"))


@pytest.fixture(scope="module", params=["bwrap", "landlock"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Report]:
    kind = request.param
    ok, detail = probe_bwrap_sync(False) if kind == "bwrap" else probe_landlock_sync(False)
    if not ok:
        pytest.skip(f"{kind} does not work here: {detail}")
    base = tmp_path_factory.mktemp(f"boundary-{kind}")
    ws, outside = base / "ws", base / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "notes.txt").write_text("public\n")
    (outside / "notes.txt").chmod(0o644)
    (ws / "probe.py").write_text(PROBE)
    _setuid_tar(ws / "setuid.tar")
    planted: list[Path] = []
    if AS_ROOT:  # secrets where a prompt-injected model would look for them
        for path in (
            Path("/root") / f".starweave-{CANARY}",
            Path("/home") / f"sbx-{CANARY}" / ".ssh" / "id_rsa",
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(CANARY)
            planted.append(path)
    os.environ["STARWEAVE_TEST_CANARY_KEY"] = CANARY

    async def run() -> dict[str, Any]:
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        session = ShellSession(ShellConfig(workspace=str(ws), sandbox=kind), sandbox=kind)
        secret_list = ",".join(str(p) for p in planted) or "/nonexistent"
        args = [os.getpid(), port, SETUID_BINARY or "-", secret_list, f"{outside}/x", f"{outside}/notes.txt"]
        command = "python3 probe.py " + " ".join(map(str, args))
        async with server:
            return await run_command(command, session=session, timeout=60)

    try:
        result = asyncio.run(run())
    finally:
        del os.environ["STARWEAVE_TEST_CANARY_KEY"]
        for path in planted:
            path.unlink()
        if planted:
            shutil.rmtree(planted[1].parent.parent)
    assert result.get("exit_code") == 0, result
    yield Report(kind, ws, outside, result, json.loads(result["stdout"]))


def test_no_capability_is_left_and_no_new_privileges(report: Report) -> None:
    status = report.data["status"]
    assert status["CapEff"] == status["CapPrm"] == status["CapAmb"] == status["CapInh"] == "0000000000000000"
    if AS_ROOT:
        assert status["CapBnd"] == "0000000000000000"  # nothing to regain at execve
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"


def test_the_root_file_system_cannot_be_remounted_read_write(report: Report) -> None:
    assert report.denied("remount_rw") and report.data["mount_cmd"] != 0
    assert not Path("/etc/starweave-sbx").exists()


def test_device_nodes_and_fifos_cannot_be_made(report: Report) -> None:
    assert report.denied("mknod_char") and report.denied("mknod_block") and report.denied("mkfifo")
    assert not (report.workspace / "fifo").exists()
    assert not (report.workspace / "memdev").exists() and not (report.workspace / "blkdev").exists()


def test_no_socket_file_is_left_and_socketpair_still_works(report: Report) -> None:
    assert report.denied("mknod_socket") and report.denied("bind_socketpair")
    assert not (report.workspace / "sock").exists() and not (report.workspace / "bound.sock").exists()
    assert report.data["socketpair"] == ["ok", "hi"]


def test_memory_no_process_limit_counts_cannot_be_taken(report: Report) -> None:
    assert report.data["memfd"] == ["denied", 38] and report.data["shmget"] == ["denied", 38]


def test_no_setuid_or_setgid_file_is_ever_created(report: Report) -> None:
    assert report.denied("chmod_setuid") and report.denied("chmod_setgid") and report.denied("create_setuid")
    for path in report.workspace.iterdir():
        mode = path.lstat().st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID), f"{path.name} is {oct(mode)}"
    assert (report.workspace / "from-tar").exists()  # extracted, without the bit
    if SETUID_BINARY:
        assert (report.workspace / "copied").exists()  # cp -p copied it, without the bit


def test_files_cannot_be_given_away(report: Report) -> None:
    assert report.denied("chown_other")


def test_proc_shows_only_the_sandbox_and_not_the_parent(report: Report) -> None:
    listed = report.data["proc_list"]
    if listed[0] == "ok":
        assert os.getpid() not in listed[1] and len(listed[1]) <= 4
    for name in ("parent_environ", "parent_cmdline"):
        status, value = report.data[name]
        assert status == "denied" or (CANARY not in value and "pytest" not in value), name
    assert CANARY not in report.result["stdout"] + report.result["stderr"]


def test_secrets_are_masked(report: Report) -> None:
    assert report.denied("shadow") or report.data["shadow"][1] == ""
    secrets_read = {k: v for k, v in report.data.items() if k.startswith("secret")}
    if AS_ROOT:
        assert len(secrets_read) == 2
    for name, (status, value) in secrets_read.items():
        assert status == "denied" or value == "", name
    assert CANARY not in report.result["stdout"]


def test_home_and_tmp_are_private_and_the_environment_is_clean(report: Report) -> None:
    env = report.data["env"]
    assert not env["HOME"].startswith(str(report.workspace)) and env["HOME"] != str(Path.home())
    assert "STARWEAVE_TEST_CANARY_KEY" not in env and CANARY not in json.dumps(env)
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert report.data["write_home"][0] == report.data["write_tmpdir"][0] == "ok"
    assert not Path(env["HOME"]).exists() or report.kind == "bwrap"  # Landlock's are removed after


def test_writes_outside_the_workspace_fail(report: Report) -> None:
    for i in range(4):
        assert report.denied(f"write_out{i}"), i
    assert not (report.outside / "x").exists()
    assert not Path("/usr/starweave-sbx").exists() and not Path("/var/tmp/starweave-sbx").exists()


def test_metadata_outside_the_workspace_cannot_change(report: Report) -> None:
    # Landlock has no right for chmod/utimes: as root the launcher makes every other mount read-only;
    # an unprivileged user's own files stay changeable there (README, "Shell safety").
    if report.kind == "landlock" and not AS_ROOT:
        pytest.skip("Landlock without root cannot stop chmod on the user's own files")
    assert report.denied("chmod_outside") and report.denied("utime_outside")
    notes = report.outside / "notes.txt"
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644 and notes.stat().st_mtime > 0


def test_no_network_and_no_local_sockets(report: Report) -> None:
    assert report.denied("tcp_host") and report.denied("unix_socket")


def test_no_nested_user_namespace(report: Report) -> None:
    assert report.denied("new_userns")


def test_limits_apply_inside(report: Report) -> None:
    limits = report.data["limits"]
    config = ShellConfig(workspace="/")
    assert limits["RLIMIT_DATA"] == config.max_memory_mb << 20
    assert limits["RLIMIT_FSIZE"] == config.max_file_size_mb << 20
    assert limits["RLIMIT_NOFILE"] <= config.max_open_files and limits["RLIMIT_CORE"] == 0
    assert limits["RLIMIT_NPROC"] >= config.max_processes


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
async def test_bind_works_when_the_network_is_allowed(kind: str, tmp_path: Path) -> None:
    ok, detail = await asyncio.to_thread(probe_bwrap_sync if kind == "bwrap" else probe_landlock_sync, True)
    if not ok:
        pytest.skip(f"{kind} does not work here: {detail}")
    (tmp_path / "b.py").write_text(
        "import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()\n"
        "print('bound', s.getsockname()[1] > 0)\n"
    )
    config = ShellConfig(workspace=str(tmp_path), sandbox=kind, allow_network=True)
    result = await run_command("python3 b.py", session=ShellSession(config, sandbox=kind), timeout=60)
    assert result["stdout"] == "bound True\n", result
