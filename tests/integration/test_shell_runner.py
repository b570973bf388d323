"""run_command for real: bash's pipes, redirections and exit codes, timeouts, output caps, the clean
environment, and the sandbox's own guarantees (writes, network, secrets, readonly mode)."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from pathlib import Path

import pytest
from helpers.shell_sessions import SANDBOXES, run, session_for, survivors

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError
from starweave.tools.servers.shell.runner import clean_env
from starweave.tools.servers.shell.session import ShellSession


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "notes.txt").write_text("first\nsecond\nthird\n")
    return path


@pytest.fixture(params=["none", *SANDBOXES])
def session(request: pytest.FixtureRequest, ws: Path) -> ShellSession:
    """Every behaviour test runs unconfined (SANDBOX none) and in each sandbox."""
    return session_for(request.param, ws)


@pytest.fixture(params=SANDBOXES)
def sandboxed(request: pytest.FixtureRequest, ws: Path) -> ShellSession:
    """The boundary tests run in each sandbox."""
    return session_for(request.param, ws)


async def test_pipes_between_real_processes(session: ShellSession) -> None:
    result = await run(session, "printf 'b\\na\\nc\\n' | sort | head -2")
    assert result == {"success": True, "exit_code": 0, "stdout": "a\nb\n", "stderr": ""}
    assert (await run(session, "cat notes.txt | tail -n 1"))["stdout"] == "third\n"
    assert (await run(session, "ls -la /usr/bin | sort -k5 -n | tail -3"))["stdout"].count("\n") == 3


async def test_and_or_semicolon_follow_exit_codes(session: ShellSession) -> None:
    assert (await run(session, "false && echo no || echo yes"))["stdout"] == "yes\n"
    assert (await run(session, "true || echo no; echo after"))["stdout"] == "after\n"
    last_fails = await run(session, "echo one; false")
    assert last_fails["exit_code"] == 1 and not last_fails["success"] and last_fails["stdout"] == "one\n"
    missing = await run(session, "ls does-not-exist")
    assert missing["exit_code"] == 2 and "does-not-exist" in missing["stderr"]
    assert (await run(session, "exit 7"))["exit_code"] == 7
    assert (await run(session, "no-such-tool-here"))["exit_code"] == 127
    killed = await run(session, "kill -9 $$")
    assert killed["exit_code"] == 137 and killed["success"] is False  # 128 + SIGKILL, as bash says


async def test_redirections_create_append_and_read_files(session: ShellSession, ws: Path) -> None:
    result = await run(
        session, "mkdir demo && echo 'hello' > demo/a.txt && echo more >> demo/a.txt && wc -l < demo/a.txt"
    )
    assert result["stdout"].strip() == "2"
    assert (ws / "demo" / "a.txt").read_text() == "hello\nmore\n"
    await run(session, "ls nothing-here 2> err.txt")
    assert "nothing-here" in (ws / "err.txt").read_text()
    both = await run(session, "ls notes.txt nothing-here &> both.txt")
    assert both["stdout"] == "" and "notes.txt" in (ws / "both.txt").read_text()
    merged = await run(session, "ls nothing-here 2>&1 | wc -l")
    assert merged["stdout"].strip() == "1" and merged["stderr"] == ""
    assert (await run(session, "mkdir demo2 && echo hi > demo2/a.txt && cat demo2/a.txt"))["stdout"] == "hi\n"


async def test_globs_and_cd(session: ShellSession, ws: Path) -> None:
    for name in ("b.txt", "a.txt", "c.log"):
        (ws / name).write_text(name)
    assert (await run(session, "ls *.txt"))["stdout"].split() == ["a.txt", "b.txt", "notes.txt"]
    assert (await run(session, "find . -name '*.txt' | wc -l"))["stdout"].strip() == "3"
    nomatch = await run(session, "ls *.nothing")
    assert nomatch["exit_code"] != 0 and "*.nothing" in nomatch["stderr"]
    cd = await run(session, "mkdir -p sub && cd sub && touch x && ls *")
    assert cd["stdout"] == "x\n" and (ws / "sub" / "x").exists()
    assert (await run(session, "pwd"))["stdout"] == f"{ws / 'sub'}\n"  # the cd carried over
    assert (await run(session, "pwd", cwd=str(ws)))["stdout"] == f"{ws}\n"
    assert (await run(session, "pwd", cwd="sub"))["stdout"] == f"{ws / 'sub'}\n"


async def test_clean_environment_hides_parent_secrets(
    session: ShellSession, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("BASH_ENV", str(ws / "rc.sh"))  # would run for every non-interactive bash
    monkeypatch.setenv("ENV", str(ws / "rc.sh"))
    (ws / "rc.sh").write_text("echo RC-RAN\n")
    result = await run(session, "printenv")
    assert "sk-very-secret-value" not in result["stdout"] and "aws-secret" not in result["stdout"]
    assert "RC-RAN" not in result["stdout"]
    env = dict(line.split("=", 1) for line in result["stdout"].splitlines())
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    # HOME is private, never the workspace: tools read their configuration from it.
    assert env["HOME"] != str(ws) and not env["HOME"].startswith(str(ws) + "/")
    assert env["TMPDIR"] and env["LANG"] == "C.UTF-8" and env["TERM"] == "dumb"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["PAGER"] == env["GIT_PAGER"] == "cat"
    expected = set(clean_env("/h", "/t"))
    # bash itself adds PWD, SHLVL and _ (what any bash -c has); nothing comes from Starweave.
    assert set(env) <= expected | {"PWD", "SHLVL", "_"}, set(env) - expected
    again = dict(line.split("=", 1) for line in (await run(session, "env"))["stdout"].splitlines())
    private = {"HOME", "TMPDIR", "_"}  # fresh for every command without bubblewrap; _ is the program
    assert {k: v for k, v in again.items() if k not in private} == {
        k: v for k, v in env.items() if k not in private
    }


async def test_no_profile_or_rc_file_is_read(session: ShellSession) -> None:
    # A login or interactive shell would read these; bash --noprofile --norc -c reads none.
    result = await run(session, "echo $- ; shopt -q login_shell && echo LOGIN || echo plain")
    assert "i" not in result["stdout"].split("\n")[0] and result["stdout"].endswith("plain\n")


async def test_timeout_kills_every_process(session: ShellSession) -> None:
    marker = f"37.{os.getpid()}{secrets.randbelow(10**6)}"  # this run's own `sleep`
    start = time.monotonic()
    result = await run(session, f"sleep {marker} | cat", limit=1)
    assert result == {
        "success": False,
        "error": "Timeout after 1s.",
        "exit_code": None,
        "stdout": "",
        "stderr": "",
    }
    assert time.monotonic() - start < 10
    assert await survivors(marker) == []


async def test_timeout_is_capped_by_max_timeout(ws: Path) -> None:
    session = session_for("none", ws, timeout=1, max_timeout=1)
    result = await run(session, "sleep 5", limit=100)
    assert result["error"] == "Timeout after 1s." and result["exit_code"] is None


async def test_timeout_keeps_what_was_printed_before_the_kill(session: ShellSession) -> None:
    start = time.monotonic()
    result = await run(session, "echo started; ls nothing-here; sleep 5; echo never", limit=1)
    assert time.monotonic() - start < 4
    assert result["success"] is False and result["error"] == "Timeout after 1s."
    assert result["exit_code"] is None and result["stdout"] == "started\n"
    assert "nothing-here" in result["stderr"] and "truncated" not in result


@pytest.mark.parametrize("kind", ["none", *SANDBOXES])
async def test_timeout_output_is_capped(kind: str, ws: Path) -> None:
    session = session_for(kind, ws, max_output_bytes=1024)
    result = await run(session, "seq 1 100000; sleep 5", limit=1)
    assert result["exit_code"] is None and result["truncated"] is True
    assert len(result["stdout"]) == 1024 and result["stdout"].startswith("1\n2\n")


@pytest.mark.parametrize("kind", ["none", *SANDBOXES])
async def test_output_is_capped_and_marked(kind: str, ws: Path) -> None:
    session = session_for(kind, ws, max_output_bytes=1024)
    result = await run(session, "seq 1 200000; seq 1 200000 >&2")
    assert result["success"] and result["truncated"] is True
    assert len(result["stdout"].encode()) == 1024 and result["stdout"].startswith("1\n2\n3\n")
    assert len(result["stderr"].encode()) == 1024
    assert "truncated" not in await run(session, "echo small")


# ---- the sandbox itself ------------------------------------------------------------------------------


async def test_sandbox_blocks_writes_outside_workspace(
    sandboxed: ShellSession, ws: Path, tmp_path: Path
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
        "import os\n"
        "open(os.path.join(os.environ['TMPDIR'], 'private.txt'), 'w').write('ok')\n"
    )
    result = await run(sandboxed, "python3 escape.py")
    assert result["success"], result
    assert "WROTE" not in result["stdout"] and result["stdout"].count("DENIED") == 3
    assert not (outside / "x.txt").exists()
    assert (ws / "inside.txt").read_text() == "ok"
    assert not await asyncio.to_thread(os.path.exists, "/etc/starweave-test")


async def test_a_link_made_by_the_command_leads_nowhere(
    sandboxed: ShellSession, ws: Path, tmp_path: Path
) -> None:
    # The old policy checked the glob again at run time; now the sandbox decides where a write lands.
    (tmp_path / "outside").mkdir()
    result = await run(sandboxed, f"ln -s {tmp_path}/outside escape && echo x > escape/f.txt")
    assert result["exit_code"] != 0, result
    assert not (tmp_path / "outside" / "f.txt").exists()


async def test_sandbox_has_no_network(sandboxed: ShellSession) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    line = (
        "python3 -c 'import socket,sys\n"
        "try:\n"
        f'    socket.create_connection(("127.0.0.1", {port}), timeout=3); print("CONNECTED")\n'
        "except OSError as e:\n"
        '    print("NO NETWORK", e)\'; '
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo BASH-CONNECTED || echo BASH-REFUSED"
    )
    async with server:
        result = await run(sandboxed, line)
    assert "NO NETWORK" in result["stdout"] and "CONNECTED\n" not in result["stdout"], result
    assert "BASH-REFUSED" in result["stdout"], result


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_sandbox_masks_secrets_and_readonly_binds_workspace(kind: str, ws: Path) -> None:
    session = session_for(kind, ws, mode="readonly")
    line = (
        "cat /etc/shadow >/dev/null 2>&1 && echo SHADOW $(wc -c < /etc/shadow) || echo SHADOW denied; "
        "echo x > w.txt 2>/dev/null && echo WROTE || echo READONLY; "
        "touch t 2>/dev/null || echo NO-TOUCH; rm notes.txt 2>/dev/null || echo NO-RM"
    )
    result = await run(session, line)
    assert result["success"], result
    assert "READONLY" in result["stdout"] and not (ws / "w.txt").exists()
    assert "NO-TOUCH" in result["stdout"] and "NO-RM" in result["stdout"] and (ws / "notes.txt").exists()
    assert "SHADOW 0" in result["stdout"] or "SHADOW denied" in result["stdout"]


# ---- hostile inputs end by their deadline, off the event loop ------------------------------------


async def test_a_running_command_does_not_block_the_event_loop(sandboxed: ShellSession) -> None:
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    try:
        result = await run(sandboxed, "seq 1 300000 | sort -rn | head -1; sleep 1")
    finally:
        done.set()
        await task
    assert result["stdout"] == "300000\n", result
    assert len(gaps) > 20 and max(gaps) < 5, max(gaps)  # the loop kept turning while it ran


@pytest.mark.parametrize(
    "line",
    [
        "sed -f /dev/zero notes.txt",
        "sed -f /dev/stdin notes.txt",
        "awk -f fifo notes.txt",
        "cat < fifo",
        "cat fifo",
        "echo /*/*/*/*/*/*/*/* | wc -c",
        "cat /dev/zero | tr -d x",
        "yes",
    ],
)
async def test_endless_inputs_end_by_the_deadline(sandboxed: ShellSession, ws: Path, line: str) -> None:
    os.mkfifo(ws / "fifo")
    start = time.monotonic()
    result = await run(sandboxed, line, limit=2)
    assert time.monotonic() - start < 2 + 20
    assert result.get("exit_code") is not None or result["error"] == "Timeout after 2s.", result
    assert len(result["stdout"]) <= sandboxed.config.max_output_bytes
    assert (await run(sandboxed, "echo alive"))["stdout"] == "alive\n"


def test_a_relative_workspace_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match=r"SHELL\.WORKSPACE"):
        ShellSession(ShellConfig(workspace="relative/dir"))


async def test_unrestricted_mode_is_bash_without_a_sandbox(ws: Path, tmp_path: Path) -> None:
    session = session_for("unrestricted", ws)
    assert session.sandbox == "none" and not session.confined
    result = await run(session, f"echo $(id -u) > {tmp_path}/outside.txt; cd {tmp_path}; pwd")
    assert result["success"] and (tmp_path / "outside.txt").read_text() == f"{os.geteuid()}\n"
    assert result["cwd"] == str(tmp_path)  # anywhere is where the next command starts
