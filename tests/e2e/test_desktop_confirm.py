"""The CONFIRM safeguard as a user meets it: ``starweave run --agent host`` asks on the terminal before it
launches an application, and launches it only when the user says yes (real desktop, real mousepad)."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from helpers.desktop_env import DesktopSession
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import call, host, write_answers

pytestmark = pytest.mark.desktop

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


def launch_answers(path: Path) -> Path:
    """The HostAgent launches mousepad (a sensitive action: it starts a program), then finishes
    (a refusal stops the round before the second answer)."""
    launch = call("launch_application", command="mousepad", wait_seconds=10)
    return write_answers(
        path,
        [
            host("CONTINUE", launch["function"], launch["arguments"], "open the text editor"),
            host("FINISH", result="done"),
        ],
    )


def run_on_a_terminal(args: list[str], answer: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run the CLI with a pseudo-terminal as its stdin and the user's ``answer`` already typed.

    Returns the exit code and stdout."""
    master, slave = pty.openpty()
    try:
        os.write(master, answer.encode() + b"\n")  # the terminal buffers the line until the prompt reads it
        proc = subprocess.run(
            [*STARWEAVE, *args], cwd=cwd, env=env, stdin=slave, capture_output=True, text=True, timeout=120
        )
    finally:
        os.close(slave)
        os.close(master)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout


def mousepads_since(started: float) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["name", "create_time"]):
        if proc.info["name"] == "mousepad" and proc.info["create_time"] >= started:
            found.append(proc)
    return found


@pytest.mark.parametrize(("answer", "launched"), [("y", True), ("n", False)])
async def test_the_user_decides_whether_the_host_agent_launches_an_application(
    tmp_path: Path, desktop_session: DesktopSession, answer: str, launched: bool
) -> None:
    env = {k: v for k, v in desktop_session.app_env().items() if not k.startswith("STARWEAVE_")}
    args = [
        "run",
        "--agent",
        "host",
        "open the text editor",
        "--provider",
        "replay",
        "--replay-file",
        str(launch_answers(tmp_path / "answers.jsonl")),
        "--workspace",
        str(tmp_path / "ws"),
        "--log-dir",
        str(tmp_path / "logs"),
        "--task",
        "confirm",
    ]
    started = time.time() - 1.0  # process start times are rounded
    try:
        code, out = await asyncio.to_thread(run_on_a_terminal, args, answer, tmp_path, env)
        assert code == (0 if launched else 1), out  # a failed round exits with 1
        assert "Confirm (CONFIRM)" in out and "launch_application" in out and "it starts a program" in out
        result = json.loads((tmp_path / "logs" / "confirm" / "result.json").read_text(encoding="utf-8"))
        records = (tmp_path / "logs" / "confirm" / "response.log").read_text(encoding="utf-8")
        editors = mousepads_since(started)
        if launched:
            assert editors, "mousepad was not started after the user said yes"
            assert result["status"] == "FINISH", result
            # launch_application waited for the window, and the HostAgent's memory says so.
            assert "Approved by the user: launch_application" in records and "its window is" in records
        else:
            assert not editors, "mousepad was started although the user said no"
            # Refusing a sensitive action stops the round (the reference's CONFIRM semantics).
            assert result["status"] == "FAIL", result
            assert "the user did not allow launch_application" in result["result"]
    finally:
        for proc in mousepads_since(started):
            proc.kill()
