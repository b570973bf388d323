"""run_command for real: processes, pipes, redirections, timeouts, output caps, environment, sandbox."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.servers.shell.policy import ShellPolicy
from starweave.tools.servers.shell.runner import clean_env, run_command
from starweave.tools.servers.shell.sandbox import probe_bwrap


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "notes.txt").write_text("first\nsecond\nthird\n")
    return path


def _policy(ws: Path, sandboxed: bool = False, **kw: object) -> ShellPolicy:
    return ShellPolicy(ShellConfig(workspace=str(ws), **kw), sandboxed=sandboxed)


async def _run(policy: ShellPolicy, command: str, limit: float = 20, cwd: str | None = None) -> dict:
    return await run_command(command, policy=policy, timeout=limit, cwd=cwd)


@pytest.fixture(params=["plain", "bwrap"])
async def policy(request: pytest.FixtureRequest, ws: Path) -> ShellPolicy:
    """Every behaviour test runs without and with the sandbox."""
    if request.param == "bwrap":
        ok, detail = await probe_bwrap(False)
        if not ok:
            pytest.skip(f"bubblewrap is not usable here: {detail}")
    return _policy(ws, sandboxed=request.param == "bwrap")


async def test_pipes_between_real_processes(policy: ShellPolicy) -> None:
    result = await _run(policy, "printf 'b\\na\\nc\\n' | sort | head -2")
    assert result == {"success": True, "exit_code": 0, "stdout": "a\nb\n", "stderr": ""}
    assert (await _run(policy, "cat notes.txt | tail -n 1"))["stdout"] == "third\n"
    assert (await _run(policy, "ls -la /usr/bin | sort -k5 -n | tail -3"))["stdout"].count("\n") == 3


async def test_and_or_semicolon_follow_exit_codes(policy: ShellPolicy) -> None:
    assert (await _run(policy, "false && echo no || echo yes"))["stdout"] == "yes\n"
    assert (await _run(policy, "true || echo no; echo after"))["stdout"] == "after\n"
    last_fails = await _run(policy, "echo one; false")
    assert last_fails["exit_code"] == 1 and not last_fails["success"] and last_fails["stdout"] == "one\n"
    missing = await _run(policy, "ls does-not-exist")
    assert missing["exit_code"] == 2 and "does-not-exist" in missing["stderr"]


async def test_redirections_create_append_and_read_files(policy: ShellPolicy, ws: Path) -> None:
    result = await _run(policy, "echo 'hello' > demo/a.txt && echo more >> demo/a.txt && wc -l < demo/a.txt")
    assert result["stdout"].strip() == "2"
    assert (ws / "demo" / "a.txt").read_text() == "hello\nmore\n"
    await _run(policy, "ls nothing-here 2> err.txt")
    assert "nothing-here" in (ws / "err.txt").read_text()
    both = await _run(policy, "ls notes.txt nothing-here &> both.txt")
    assert both["stdout"] == "" and "notes.txt" in (ws / "both.txt").read_text()
    merged = await _run(policy, "ls nothing-here 2>&1 | wc -l")
    assert merged["stdout"].strip() == "1" and merged["stderr"] == ""
    assert (await _run(policy, "mkdir demo2 && echo hi > demo2/a.txt && cat demo2/a.txt"))["stdout"] == "hi\n"


async def test_globs_and_cd(policy: ShellPolicy, ws: Path) -> None:
    for name in ("b.txt", "a.txt", "c.log"):
        (ws / name).write_text(name)
    assert (await _run(policy, "ls *.txt"))["stdout"].split() == ["a.txt", "b.txt", "notes.txt"]
    assert (await _run(policy, "find . -name '*.txt' | wc -l"))["stdout"].strip() == "3"
    nomatch = await _run(policy, "ls *.nothing")
    assert nomatch["exit_code"] != 0 and "*.nothing" in nomatch["stderr"]
    cd = await _run(policy, "mkdir -p sub && cd sub && touch x && ls *")
    assert cd["stdout"] == "x\n" and (ws / "sub" / "x").exists()
    assert (await _run(policy, "pwd", cwd="sub"))["stdout"].strip() == str(ws / "sub")


async def test_clean_environment_hides_parent_secrets(
    policy: ShellPolicy, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    result = await _run(policy, "printenv")
    assert "sk-very-secret-value" not in result["stdout"] and "aws-secret" not in result["stdout"]
    env = dict(line.split("=", 1) for line in result["stdout"].splitlines())
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    # HOME is private, never the workspace: tools read their configuration from it.
    assert env["HOME"] != str(ws) and not env["HOME"].startswith(str(ws) + "/")
    assert env["TMPDIR"] and env["LANG"] == "C.UTF-8" and env["TERM"] == "dumb"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["PAGER"] == env["GIT_PAGER"] == "cat"
    expected = set(clean_env("/h", "/t"))
    assert set(env) <= expected | {"PWD"}  # bwrap's --chdir sets PWD
    again = dict(line.split("=", 1) for line in (await _run(policy, "env"))["stdout"].splitlines())
    private = {"HOME", "TMPDIR"}  # fresh for every command without bubblewrap
    assert {k: v for k, v in again.items() if k not in private} == {
        k: v for k, v in env.items() if k not in private
    }


async def test_timeout_kills_every_process(policy: ShellPolicy) -> None:
    marker = f"37.{os.getpid()}"  # this run's own `sleep` (another suite may run this test too)
    start = time.monotonic()
    result = await _run(policy, f"sleep {marker} | cat", limit=1)
    assert result == {
        "success": False,
        "error": "Timeout after 1s.",
        "exit_code": None,
        "stdout": "",
        "stderr": "",
    }
    assert time.monotonic() - start < 10
    # Reaping may lag on a loaded machine; a survivor would still be there long after (it sleeps 37 s).
    deadline = time.monotonic() + 20.0
    while left := await asyncio.to_thread(_processes_with_arg, marker):
        assert time.monotonic() < deadline, f"still running: {left}"
        await asyncio.sleep(0.1)


def _processes_with_arg(arg: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmdline[:1] == [b"/usr/bin/sleep"] and arg.encode() in cmdline:
                found.append(pid)
    return found


async def test_timeout_is_capped_by_max_timeout(ws: Path) -> None:
    policy = _policy(ws, timeout=1, max_timeout=1)
    result = await _run(policy, "sleep 5", limit=100)
    assert result["error"] == "Timeout after 1s." and result["exit_code"] is None


async def test_timeout_keeps_what_was_printed_before_the_kill(policy: ShellPolicy) -> None:
    start = time.monotonic()
    result = await _run(policy, "echo started; ls nothing-here; sleep 5; echo never", limit=1)
    assert time.monotonic() - start < 4
    assert result["success"] is False and result["error"] == "Timeout after 1s."
    assert result["exit_code"] is None and result["stdout"] == "started\n"
    assert "nothing-here" in result["stderr"] and "truncated" not in result


async def test_timeout_output_is_capped(ws: Path) -> None:
    policy = _policy(ws, max_output_bytes=1024)
    result = await _run(policy, "seq 1 100000; sleep 5", limit=1)
    assert result["exit_code"] is None and result["truncated"] is True
    assert len(result["stdout"]) == 1024 and result["stdout"].startswith("1\n2\n")


async def test_output_is_capped_and_marked(ws: Path) -> None:
    policy = _policy(ws, max_output_bytes=1024)
    result = await _run(policy, "seq 1 200000")
    assert result["success"] and result["truncated"] is True
    assert len(result["stdout"].encode()) == 1024 and result["stdout"].startswith("1\n2\n3\n")
    assert "truncated" not in await _run(policy, "echo small")


async def test_blocked_commands_do_not_run(policy: ShellPolicy, ws: Path) -> None:
    result = await _run(policy, "touch made.txt && rm -rf /")
    assert result["success"] is False and result["error"].startswith("Blocked: ")
    assert not (ws / "made.txt").exists()  # refused before anything ran
    assert (await _run(policy, "echo $(id)"))["error"].startswith("Blocked: command substitution")


async def test_glob_checked_again_at_run_time(ws: Path, tmp_path: Path) -> None:
    policy = _policy(ws)
    (tmp_path / "outside").mkdir()
    result = await _run(policy, f"ln -s {tmp_path}/outside escape && echo x > escape/f.txt")
    assert result["error"].startswith("Blocked: write outside the workspace")
    assert not (tmp_path / "outside" / "f.txt").exists()


# ---- the sandbox itself: things the argv policy cannot see -------------------------------------------


@pytest.fixture
async def sandboxed(ws: Path) -> ShellPolicy:
    ok, detail = await probe_bwrap(False)
    if not ok:
        print(f"SKIP: bubblewrap is not usable here: {detail}")
        pytest.skip(f"bubblewrap is not usable here: {detail}")
    return _policy(ws, sandboxed=True)


async def test_sandbox_blocks_writes_outside_workspace(
    sandboxed: ShellPolicy, ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "escape.py").write_text(
        "import sys\n"
        f"for p in ({str(outside / 'x.txt')!r}, '/etc/starweave-test', '/usr/starweave-test'):\n"
        "    try:\n"
        "        open(p, 'w').write('x')\n"
        "        print('WROTE', p)\n"
        "    except OSError as e:\n"
        "        print('DENIED', p, e.errno)\n"
        "open('inside.txt', 'w').write('ok')\n"
        "open('/tmp/private.txt', 'w').write('ok')\n"
    )
    result = await _run(sandboxed, "python3 escape.py")
    assert result["success"], result
    assert "WROTE" not in result["stdout"] and result["stdout"].count("DENIED") == 3
    assert not (outside / "x.txt").exists()
    assert (ws / "inside.txt").read_text() == "ok"
    assert not await asyncio.to_thread(os.path.exists, "/tmp/private.txt")


async def test_sandbox_has_no_network(sandboxed: ShellPolicy, ws: Path) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    (ws / "net.py").write_text(
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    print('CONNECTED')\n"
        "except OSError as e:\n"
        "    print('NO NETWORK', e)\n"
    )
    async with server:
        result = await _run(sandboxed, "python3 net.py")
    assert "NO NETWORK" in result["stdout"], result


async def test_sandbox_masks_secrets_and_readonly_binds_workspace(ws: Path) -> None:
    ok, detail = await probe_bwrap(False)
    if not ok:
        pytest.skip(f"bubblewrap is not usable here: {detail}")
    (ws / "peek.py").write_text(
        "try:\n"
        "    print('SHADOW', len(open('/etc/shadow').read()))\n"
        "except OSError:\n"
        "    print('SHADOW denied')\n"
        "try:\n"
        "    open('w.txt', 'w').write('x')\n"
        "    print('WROTE')\n"
        "except OSError:\n"
        "    print('READONLY')\n"
    )
    result = await _run(_policy(ws, sandboxed=True, mode="readonly"), "python3 peek.py")
    assert result["success"], result
    assert "READONLY" in result["stdout"] and not (ws / "w.txt").exists()
    assert "SHADOW 0" in result["stdout"] or "SHADOW denied" in result["stdout"]
