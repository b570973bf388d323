"""Signals and ids at the CLI, as real processes: a second Ctrl+C still exits 130, an inherited
ignored SIGINT stays ignored by the server, and a client id that is not a device id is a usage
error."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

# The child's SIGINT is set explicitly: the process running the tests may ignore it.
LAUNCH = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.{handler}); "
    "sys.argv[0] = 'starweave'; from starweave.cli import main; main()"
)
LISTENING = re.compile(r"listening on http://([^:]+):(\d+)")
DEADLINE = 60.0


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    env["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="state-", dir=tmp)
    return env


def _server(tmp: Path, handler: str) -> tuple[subprocess.Popen[str], str]:
    replay = tmp / "answers.jsonl"
    replay.write_text(json.dumps({"thought": "t", "action": {"function": "", "status": "FINISH"}}) + "\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            LAUNCH.format(handler=handler),
            "server",
            "--port",
            "0",
            "--provider",
            "replay",
            "--replay-file",
            str(replay),
            "--log-dir",
            str(tmp / "logs"),
        ],
        cwd=tmp,
        env=_env(tmp),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = LISTENING.search(line)
        if match:
            return proc, f"http://127.0.0.1:{match.group(2)}"
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"server did not start: {proc.communicate()}")


def test_ctrl_c_again_while_the_server_stops_still_exits_130(tmp_path: Path) -> None:
    proc, _url = _server(tmp_path, "default_int_handler")
    proc.send_signal(signal.SIGINT)
    # Ctrl+C pressed again and again until it has gone: whichever moment of the shutdown each
    # one lands in (serving, cleaning up, the interpreter's own exit), the code is 130.
    deadline = time.monotonic() + DEADLINE
    while proc.poll() is None and time.monotonic() < deadline:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(0.05)
        except subprocess.TimeoutExpired:
            continue
    if proc.poll() is None:
        proc.kill()
    _out, errors = proc.communicate()
    assert proc.returncode == 130, errors


def test_an_inherited_ignored_sigint_does_not_stop_the_server(tmp_path: Path) -> None:
    proc, url = _server(tmp_path, "SIG_IGN")
    try:
        proc.send_signal(signal.SIGINT)
        # Still serving well after the signal: it answers (401: no key was sent) and has not exited.
        for _ in range(5):
            assert httpx.get(url + "/api/health", timeout=DEADLINE).status_code == 401
        assert proc.poll() is None
    finally:
        proc.terminate()
        _out, errors = proc.communicate(timeout=DEADLINE)
    assert "Traceback" not in errors


def test_a_client_id_that_is_not_a_device_id_is_a_usage_error(tmp_path: Path) -> None:
    for bad in ("a/b", "../x", "", "x" * 129, "dev 1"):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                LAUNCH.format(handler="default_int_handler"),
                "client",
                "--client-id",
                bad,
            ],
            cwd=tmp_path,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert done.returncode == 2, (bad, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "--client-id" in lines[0] and "not a valid id" in lines[0], done.stderr
