"""The model's shell is bash in the sandbox (issue 24), under bubblewrap and under Landlock: command
lines give what bash gives, the working directory carries over between calls as in a terminal,
nothing a command starts outlives it, and lines bash cannot take get a clear error."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.shell_sessions import SANDBOXES, run, session_for, survivors

from starweave.tools.sandbox.launch import CLEAN_PATH, clean_env
from starweave.tools.servers.shell.runner import BASH_OPTIONS, MAX_COMMAND_CHARS
from starweave.tools.servers.shell.session import ShellSession

# The issue's table: each was refused before it reached a shell.
ISSUE_TABLE = [
    "for f in *.txt; do echo $f; done",
    "X=3; echo $X",
    "echo $(ls | wc -l)",
    "find . -type f -exec chmod 644 {} +",
    "python3 -c 'print(1+1)'",
    "bash -c 'echo sub'",
    "sleep 1 &",
]
CONSTRUCTS = {
    "function": 'greet() { local who=${1:-world}; echo "hello $who"; }; greet; greet you',
    "here-document": "cat <<EOF\nsum $((2+3)) in $(basename \"$PWD\")\nEOF\ncat <<'RAW'\n$HOME stays\nRAW",
    "here-document into a file": "cat > made.txt <<EOF\nline one\nEOF\nwc -l < made.txt",
    "subshell": "(cd sub && pwd); pwd; (exit 4) || echo sub=$?",
    "xargs": "ls *.txt | xargs -n1 wc -c",
    "xargs -I and sh -c": "printf '%s\\n' one two | xargs -I{} sh -c 'echo {}: $(printf {} | wc -c)'",
    "while read": "printf 'a 1\\nb 2\\n' | while read k v; do echo \"$v=$k\"; done",
    "arrays": "a=(x y z); echo ${#a[@]} ${a[1]}; declare -A m=([k]=v); echo ${m[k]}",
    "case, [[ ]]": "for w in apple kiwi; do case $w in a*) echo A;; *) [[ $w = k* ]] && echo K; esac; done",
    "process substitution": "diff <(sort a.txt) <(sort b.txt); echo rc=$?",
    "here-string": "tr a-z A-Z <<< hello",
    "brace expansion": "mkdir -p out/{x,y} && ls out",
    "pipefail": "set -o pipefail; false | true; echo $?",
    "set -e": "set -e; echo before; false; echo never",
    "the user's own EXIT trap": "trap 'echo bye' EXIT; echo hi",
    "eval and source": "echo 'V=from-file' > v.sh; source v.sh; eval 'echo $V'",
    "exec": "exec echo replaced; echo never",
    "backticks and arithmetic": "n=`ls | wc -l`; echo $((n * 2))",
    "a job waited for": "(sleep 0.2; echo job) & wait; echo after",
    "$! and wait": "sleep 0.1 & p=$!; wait $p; echo waited $?",
    "globstar": "shopt -s globstar nullglob; echo **/*.txt",
    "printf -v and mapfile": "printf -v x '%03d' 7; mapfile -t l < a.txt; echo $x ${#l[@]}",
    "error on line 3": "echo one\necho two\nnosuchcommand-x\necho four",
    "syntax error": "if then fi",
    "syntax error after a command": "echo a; if then fi",
    "syntax error on line 2": "echo a\nfor do done",
    "unterminated quote": "echo 'open",
    "exit codes": "(exit 5); echo $?; exit 3",
    "a script": "printf 'import sys\\nprint(sys.argv[1:])\\n' > s.py && python3 s.py a b",
    "stdin is empty": 'cat; read x; echo "read=$? x=$x"',
    "$0 and $#": "echo $0 $#",
    "cd then pwd": "cd sub; pwd; cd ..; pwd",
    "awk and sed programs": "awk 'BEGIN { \"echo piped\" | getline x; print x }'; sed -n 's/alpha/A/p' a.txt",
    "40 commands in a pipeline": "cat a.txt" + " | cat" * 40,
    "70 statements": "true; " * 70 + "echo done",
}


def _furnish(ws: Path) -> None:
    """The same small project in every workspace a line runs in."""
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\ngamma\n")
    (ws / "b.txt").write_text("beta\ngamma\n")
    (ws / "sub" / "c.txt").write_text("see\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(ws / "a.txt", 0o600)
    os.chmod(ws / "run.sh", 0o755)


def _tree(ws: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry of ``ws``: its mode and, for a file, its content."""
    out = {}
    for path in sorted(ws.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(ws))] = (st.st_mode, path.read_bytes() if path.is_file() else b"")
    return out


def _bash(line: str, ws: Path, scratch: Path) -> dict[str, Any]:
    """What bash itself gives for ``line`` in ``ws``: no sandbox, the same clean environment."""
    bash = shutil.which("bash", path=CLEAN_PATH)
    assert bash
    (scratch / "home").mkdir(parents=True)
    env = clean_env(str(scratch / "home"), str(scratch))
    done = subprocess.run(
        [bash, *BASH_OPTIONS, "-c", line, "bash"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    return {"exit_code": done.returncode, "stdout": done.stdout.decode(), "stderr": done.stderr.decode()}


def _same(result: dict[str, Any], ws: Path) -> dict[str, Any]:
    text = {k: str(result.get(k)).replace(str(ws), "@WS@") for k in ("stdout", "stderr")}
    return {"exit_code": result.get("exit_code"), **text}


@pytest.mark.parametrize("kind", SANDBOXES)
@pytest.mark.parametrize("line", [*ISSUE_TABLE, *CONSTRUCTS.values()], ids=[*ISSUE_TABLE, *CONSTRUCTS])
async def test_a_line_gives_what_bash_gives(kind: str, line: str, tmp_path: Path) -> None:
    mine, ref = tmp_path / "mine" / "ws", tmp_path / "ref" / "ws"
    _furnish(mine)
    _furnish(ref)
    expected = _bash(line, ref, tmp_path / "scratch")
    got = await run(session_for(kind, mine), line)
    assert "error" not in got, got
    assert got["success"] is (got["exit_code"] == 0)
    assert _same(got, mine) == _same(expected, ref)
    assert _tree(mine) == _tree(ref)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_the_issue_table_in_particular(kind: str, tmp_path: Path) -> None:
    # Spelled out, so that what bash gives is written down too (the test above compares).
    _furnish(tmp_path)
    session = session_for(kind, tmp_path)
    outputs = [await run(session, line) for line in ISSUE_TABLE]
    assert [r["stdout"] for r in outputs] == ["a.txt\nb.txt\n", "3\n", "4\n", "", "2\n", "sub\n", ""]
    assert all(r["exit_code"] == 0 and r["stderr"] == "" for r in outputs), outputs
    files = [os.path.join(d, f) for d, _, names in os.walk(tmp_path) for f in names]
    modes = {f: os.stat(f).st_mode & 0o7777 for f in files}
    assert set(modes.values()) == {0o644}, modes


@pytest.fixture(params=SANDBOXES)
def session(request: pytest.FixtureRequest, tmp_path: Path) -> ShellSession:
    ws = tmp_path / "ws"
    _furnish(ws)
    return session_for(request.param, ws)


# ---- the working directory -------------------------------------------------------------------------


async def test_cd_carries_over_to_the_next_call(session: ShellSession) -> None:
    ws = Path(session.workspace)
    moved = await run(session, "cd sub")
    assert moved == {"success": True, "exit_code": 0, "stdout": "", "stderr": "", "cwd": str(ws / "sub")}
    assert (await run(session, "pwd")) == {
        "success": True,
        "exit_code": 0,
        "stdout": f"{ws}/sub\n",
        "stderr": "",
    }
    assert (await run(session, "ls"))["stdout"] == "c.txt\n"
    deeper = await run(session, "mkdir -p d/e && cd d/e; exit 3")  # exit status is bash's, cd holds
    assert deeper["exit_code"] == 3 and deeper["cwd"] == str(ws / "sub" / "d" / "e")
    back = await run(session, "cd ~- 2>/dev/null; cd ../../..")
    assert back["cwd"] == str(ws) and (await run(session, "pwd"))["stdout"] == f"{ws}\n"


async def test_a_folder_outside_the_workspace_is_not_kept(session: ShellSession) -> None:
    ws = Path(session.workspace)
    await run(session, "cd sub")
    for line in ("cd /etc", "cd /tmp", "cd ..; cd ..", "cd /"):
        left = await run(session, f"{line}; pwd")
        assert left["success"] and "cwd" not in left, left
        assert str(ws / "sub") in left["note"] and "outside the workspace" in left["note"]
        assert (await run(session, "pwd"))["stdout"] == f"{ws}/sub\n"


async def test_a_link_out_of_the_workspace_is_not_followed_into_the_next_call(
    session: ShellSession, tmp_path: Path
) -> None:
    ws = Path(session.workspace)
    os.symlink("/etc", ws / "etc-link")
    left = await run(session, "cd etc-link")
    assert "cwd" not in left and "outside the workspace" in left["note"], left
    assert (await run(session, "pwd"))["stdout"] == f"{ws}\n"


async def test_a_cwd_argument_applies_to_that_call_only(session: ShellSession) -> None:
    ws = Path(session.workspace)
    (ws / "other").mkdir()
    await run(session, "cd sub")
    assert (await run(session, "pwd", cwd="other"))["stdout"] == f"{ws}/other\n"
    assert (await run(session, "pwd", cwd=str(ws / "other")))["stdout"] == f"{ws}/other\n"
    assert (await run(session, "pwd"))["stdout"] == f"{ws}/sub\n"
    for bad, why in (
        ("/etc", "outside the workspace"),
        ("..", "outside the workspace"),
        ("nope", "does not exist"),
    ):
        refused = await run(session, "touch ran", cwd=bad)
        assert refused["success"] is False and why in refused["error"], refused
    assert not (ws / "sub" / "ran").exists() and (await run(session, "pwd"))["stdout"] == f"{ws}/sub\n"


async def test_a_removed_folder_falls_back_to_the_workspace(session: ShellSession) -> None:
    ws = Path(session.workspace)
    await run(session, "mkdir gone && cd gone")
    shutil.rmtree(ws / "gone")  # by someone else, between two calls
    assert (await run(session, "pwd"))["stdout"] == f"{ws}\n"
    await run(session, "mkdir gone2 && cd gone2")
    removed = await run(session, "rmdir ../gone2; echo still here")  # by the command, from inside it
    assert removed["stdout"] == "still here\n" and "cwd" not in removed
    assert (await run(session, "pwd"))["stdout"] == f"{ws}\n"


async def test_a_forged_report_of_the_folder_is_ignored(session: ShellSession) -> None:
    ws = Path(session.workspace)
    # The command can find the descriptor the folder is reported on and write anything to it.
    line = (
        "fd=$(trap -p EXIT | grep -o '>&[0-9]*' | tr -d '>&'); trap - EXIT; "
        'printf "/etc\\nrelative\\n%s/a.txt\\n" "$PWD" >&$fd; echo forged $fd'
    )
    forged = await run(session, line)
    assert forged["stdout"].startswith("forged ") and "cwd" not in forged, forged
    assert (await run(session, "pwd"))["stdout"] == f"{ws}\n"


# ---- nothing outlives the command ----------------------------------------------------------------


def _marker() -> str:
    return f"3{secrets.randbelow(10**8):08d}"  # a unique number of seconds for sleep


@pytest.mark.parametrize(
    "template",
    [
        "sleep {m} &",
        "nohup sleep {m} > /dev/null 2>&1 &",
        "setsid sleep {m} &",
        "setsid -f sleep {m}",
        "sleep {m} & disown",
        "( ( sleep {m} & ) & ) ; echo started",
        "python3 -c 'import os,time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep({m})'",
    ],
)
async def test_no_job_outlives_the_command(session: ShellSession, template: str) -> None:
    marker = _marker()
    start = time.monotonic()
    result = await run(session, template.format(m=marker), limit=60)
    assert result["exit_code"] == 0, result
    assert time.monotonic() - start < 30  # bash did not wait for the job, nor did the runner
    assert await survivors(marker) == []


async def test_a_job_runs_during_the_command(session: ShellSession) -> None:
    line = "(sleep 0.3; echo late > bg.txt) & echo started; wait; cat bg.txt"
    assert (await run(session, line))["stdout"] == "started\nlate\n"


async def test_a_timeout_kills_everything(session: ShellSession) -> None:
    m = [_marker() for _ in range(4)]
    line = f"sleep {m[0]} & nohup sleep {m[1]} >/dev/null 2>&1 & setsid sleep {m[2]} & echo up; sleep {m[3]}"
    start = time.monotonic()
    result = await run(session, line, limit=2)
    assert result["error"] == "Timeout after 2s." and result["exit_code"] is None
    assert result["stdout"] == "up\n" and time.monotonic() - start < 2 + 20
    for marker in m:
        assert await survivors(marker) == [], marker


# ---- what bash cannot take ----------------------------------------------------------------------


async def test_syntax_errors_show_the_users_line(session: ShellSession) -> None:
    for line, quoted in (("if then fi", "`if then fi'"), ("echo a; case", "`echo a; case'")):
        result = await run(session, line)
        assert result["exit_code"] == 2 and quoted in result["stderr"], result
        assert "trap" not in result["stderr"] and "pwd -P" not in result["stderr"]
    later = await run(session, "echo a\necho b\n)")
    assert "line 3" in later["stderr"] and "trap" not in later["stderr"], later


async def test_too_long_and_nul_lines_get_a_clear_error(session: ShellSession) -> None:
    ws = Path(session.workspace)
    for line, why in (
        ("touch made; : " + "x" * MAX_COMMAND_CHARS, "characters"),
        ("touch made; : " + "é" * 70_000, "bytes"),  # under the character limit, over execve's
        ("touch made; echo a\0b", "NUL"),
        ("touch made; echo \ud800", "surrogate"),
        ("", "empty"),
        ("  \n ", "empty"),
    ):
        start = time.monotonic()
        result = await run(session, line)
        assert result["success"] is False and why in result["error"], result
        assert len(result["error"]) < 400 and "Errno" not in result["error"]
        assert time.monotonic() - start < 5
    assert not (ws / "made").exists()
    near = await run(session, "echo ok; : " + "x" * (MAX_COMMAND_CHARS - 20))
    assert near["stdout"] == "ok\n", {k: str(v)[:200] for k, v in near.items()}
