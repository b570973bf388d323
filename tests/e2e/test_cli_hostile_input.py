"""Issue 26 (finding 15): the `starweave` command meets undecodable arguments and an early Ctrl+C
with one line and an exit code, never a traceback. Each case runs the real command in a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# SIGINT may be ignored by the process that started the tests (a background job): the child gets
# Python's default handler back, as in a terminal, then runs `python -m starweave`.
LAUNCH = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'starweave'; {hook}runpy.run_module('starweave', run_name='__main__', alter_sys=True)"
)
# Sends this process a SIGINT the moment module ``TARGET`` starts being imported: a Ctrl+C that
# lands in the middle of the CLI's imports, every time, without guessing at timings.
HOOK = (
    "import importlib.abc, os\n"
    "class Hook(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == {target!r}:\n"
    "            sys.meta_path.remove(self)\n"
    "            os.kill(os.getpid(), signal.SIGINT)\n"
    "        return None\n"
    "sys.meta_path.insert(0, Hook())\n"
)
DEADLINE = 60.0
KEY = "sk-undecodable-0123456789abcdef"


def env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    return {**base, "PYTHONPATH": os.pathsep.join(sys.path)}


def starweave_bytes(args: list[bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`python -m starweave ARGS` with raw bytes on its command line."""
    return subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"starweave", *args],
        cwd=cwd,
        env=env(),
        capture_output=True,
        timeout=DEADLINE,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "args",
    [
        [b"run", b"\xff"],
        [b"run", b"--workspace", b"proj\xff", b"list the files"],
        [b"\xff"],
        [b"server", b"--host", b"\xff", b"--port", b"0"],
        [b"server", b"--api-key", KEY.encode() + b"\xff", b"--port", b"0"],
        [b"galaxy", b"--devices", b"d\xfe.yaml", b"do it"],
        [b"client", b"--client-id", b"\xff"],
    ],
    ids=["request", "workspace", "command", "host", "api-key", "devices", "client-id"],
)
def test_an_argument_that_is_not_utf8_is_a_one_line_usage_error(tmp_path: Path, args: list[bytes]) -> None:
    # Before the fix: a traceback (UnicodeEncodeError) once the value reached a file, the key's
    # encoder or the IDNA codec, after the workspace had been created; `client` kept retrying.
    proc = starweave_bytes(args, tmp_path)
    stderr = proc.stderr.decode("utf-8", "replace")
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, stderr
    assert len(lines) == 1 and lines[0].startswith("error: argument "), stderr
    assert "not valid UTF-8" in lines[0] and "Traceback" not in stderr
    assert KEY not in stderr  # the value is named by its position, never printed
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing created


def interrupted(target: str, cwd: Path) -> tuple[int, str]:
    """Run `starweave server --port 0`, interrupted while ``target`` is imported; its exit code and
    stderr."""
    hook = f"exec({HOOK.format(target=target)!r}); "
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCH.format(hook=hook), "server", "--host", "127.0.0.1", "--port", "0"],
        cwd=cwd,
        env=env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    return proc.returncode, proc.stderr


# typer and pydantic load with the CLI; starweave.server.app when the `server` command starts.
@pytest.mark.parametrize("target", ["typer", "pydantic", "starweave.cli_support", "starweave.server.app"])
def test_ctrl_c_while_the_cli_loads_exits_130_without_a_traceback(tmp_path: Path, target: str) -> None:
    # Before the fix: a traceback of whichever import the Ctrl+C hit, and exit code 1.
    code, errors = interrupted(target, tmp_path)
    assert code == 130, errors
    assert "Traceback" not in errors and "KeyboardInterrupt" not in errors, errors
