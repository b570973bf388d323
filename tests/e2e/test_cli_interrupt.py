"""Ctrl+C during `starweave run` and `starweave galaxy`: result.json and output.md with status
"interrupted", exit code 130. A real process, a real SIGINT, a real (stalling) model server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers.desktop_env import DesktopSession
from helpers.desktop_env import desktop_session as desktop_session
from helpers.fake_openai_server import chat_answer

# SIGINT may be ignored by the process that started the tests (a background job): the child gets
# Python's default handler back, as in a terminal, before the CLI starts.
LAUNCH = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'starweave'; from starweave.cli import main; main()"
)
CANARY_KEY = "sk-interruptcanary0123456789abcdefXYZ"
DEADLINE = 60.0


class StallingModel:
    """An OpenAI-compatible server that answers from ``answers``, then holds the next request open.

    ``stalled`` is set once a request is being held: the CLI is then waiting on its model.
    """

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.stalled = threading.Event()
        self.release = threading.Event()
        self.base_url = ""


@contextmanager
def stalling_model(answers: list[str]) -> Iterator[StallingModel]:
    state = StallingModel(answers)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if not state.answers:
                state.stalled.set()
                state.release.wait(DEADLINE * 2)
                with contextlib.suppress(OSError):  # the CLI has gone: nobody to answer
                    self.send_error(503)
                return
            payload = json.dumps(chat_answer(state.answers.pop(0))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


def start_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    full_env.update(env)
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def interrupt(proc: subprocess.Popen[str], model: StallingModel) -> tuple[str, str]:
    """Wait until the CLI waits on its model, press Ctrl+C, and collect its output."""
    if not model.stalled.wait(DEADLINE):
        proc.kill()
        out, errors = proc.communicate()
        raise AssertionError(f"the CLI never asked the model a second time:\n{out}\n{errors}")
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, errors = proc.communicate()
        raise AssertionError(f"the CLI did not end after Ctrl+C:\n{out}\n{errors}") from None


def write_step(path: str, content: str) -> str:
    return json.dumps(
        {
            "observation": "an empty workspace",
            "thought": "write the note first",
            "action": {
                "function": "write_file",
                "arguments": {"path": path, "content": content},
                "status": "CONTINUE",
            },
            "result": "",
        }
    )


def test_ctrl_c_during_run_writes_result_and_trajectory(tmp_path: Path) -> None:
    with stalling_model([write_step("note.txt", "first step done")]) as model:
        proc = start_cli(
            ["run", "write a note, then more", "-w", "ws", "--log-dir", "logs", "--task", "stopped"],
            tmp_path,
            {
                "STARWEAVE_APP_AGENT__API_TYPE": "openai",
                "STARWEAVE_APP_AGENT__API_BASE": model.base_url,
                "STARWEAVE_APP_AGENT__API_MODEL": "gpt-4o-mini",
                "STARWEAVE_APP_AGENT__API_KEY": CANARY_KEY,
                "STARWEAVE_SYSTEM__SHELL__SANDBOX": "none",
            },
        )
        out, errors = interrupt(proc, model)
    assert proc.returncode == 130, out + errors
    assert "Traceback" not in errors
    folder = tmp_path / "logs" / "stopped"
    assert f"{folder}/result.json" in " ".join(errors.split()), errors
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert result["steps"] >= 1 and "Ctrl+C" in result["error"]
    markdown = (folder / "output.md").read_text()
    assert "**Status:** interrupted" in markdown and "## Step 1" in markdown
    assert (tmp_path / "ws" / "note.txt").read_text() == "first step done"
    for log in folder.iterdir():
        assert CANARY_KEY not in log.read_text(), log.name


def test_ctrl_c_during_galaxy_writes_its_report(tmp_path: Path) -> None:
    (tmp_path / "cfg" / "ufo").mkdir(parents=True)
    (tmp_path / "cfg" / "galaxy").mkdir()
    (tmp_path / "cfg" / "galaxy" / "agent.yaml").write_text(
        "CONSTELLATION_AGENT:\n  API_TYPE: openai\n  API_BASE: ${FAKE_BASE}\n  API_MODEL: gpt-4o-mini\n"
        "  API_KEY: ${FAKE_KEY}\n"
    )
    device = tmp_path / "device.jsonl"
    device.write_text(json.dumps({"thought": "t", "action": {"function": "", "status": "FINISH"}}) + "\n")
    with stalling_model([]) as model:
        proc = start_cli(
            [
                "galaxy",
                "plan something",
                "--local",
                "1",
                "--config-dir",
                "cfg",
                "--device-provider",
                "replay",
                "--device-replay-file",
                str(device),
                "--task-name",
                "stopped",
                "--no-live",
            ],
            tmp_path,
            {"FAKE_BASE": model.base_url, "FAKE_KEY": CANARY_KEY},
        )
        out, errors = interrupt(proc, model)
    assert proc.returncode == 130, out + errors
    assert "Traceback" not in errors
    folder = tmp_path / "logs" / "galaxy" / "stopped"
    assert "Interrupted" in out and "logs/galaxy/stopped" in out, out
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert (folder / "output.md").is_file()
    for log in folder.rglob("*"):
        if log.is_file():
            assert CANARY_KEY not in log.read_text(errors="replace"), log


@pytest.mark.desktop
def test_ctrl_c_during_run_agent_host_writes_result_and_trajectory(
    tmp_path: Path, desktop_session: DesktopSession
) -> None:
    model_env = {
        "API_TYPE": "openai",
        "API_MODEL": "gpt-4o-mini",
        "API_KEY": CANARY_KEY,
    }
    with stalling_model([]) as model:
        env = {
            f"STARWEAVE_{block}__{key}": value
            for block in ("HOST_AGENT", "APP_AGENT")
            for key, value in model_env.items()
        }
        env |= {
            "STARWEAVE_HOST_AGENT__API_BASE": model.base_url,
            "STARWEAVE_APP_AGENT__API_BASE": model.base_url,
        }
        env["STARWEAVE_SYSTEM__SHELL__SANDBOX"] = "none"
        proc = start_cli(
            [
                "run",
                "--agent",
                "host",
                "open the calculator",
                "-w",
                "ws",
                "--log-dir",
                "logs",
                "--task",
                "host",
            ],
            tmp_path,
            {**env, "DISPLAY": os.environ["DISPLAY"]},
        )
        out, errors = interrupt(proc, model)
    assert proc.returncode == 130, out + errors
    assert "Traceback" not in errors
    folder = tmp_path / "logs" / "host"
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "interrupted" and result["agent"] == "HostAgent"
    assert "**Status:** interrupted" in (folder / "output.md").read_text()
    for log in folder.iterdir():
        if log.is_file() and log.suffix in (".log", ".json", ".md"):
            assert CANARY_KEY not in log.read_text(), log.name
