"""Questions to the user (ASK_QUESTION), the QA memory (USE_CUSTOMIZATION) and follow-up rounds
(MAX_ROUND) as a user meets them: `starweave run --provider replay` in a real process with a
pseudo-terminal as its stdin, the user's lines typed into it."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers.linux_replay import answer, read_jsonl

# Each test starts the CLI (and its sandboxed shell) once or twice: several seconds apiece. The same
# behaviour is covered in-process by tests/integration/test_ask_user.py.
pytestmark = pytest.mark.slow

QUESTION = "Which greeting should the file hold?"
# SIGINT may be ignored by the process that started the tests (a background job): the child gets
# Python's default handler back, as in a terminal, before the CLI starts.
LAUNCH = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'starweave'; from starweave.cli import main; main()"
)
DEADLINE = 120.0


def cli_env(tmp_path: Path, **system: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    env["STARWEAVE_DATA_DIR"] = str(tmp_path / "data")
    env.update({f"STARWEAVE_SYSTEM__{key}": value for key, value in system.items()})
    return env


def run_args(tmp_path: Path, answers: list[dict[str, Any]], task: str, *extra: str) -> list[str]:
    replay = tmp_path / f"{task}.jsonl"
    replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n", encoding="utf-8")
    return [
        *("run", "write a greeting", "--provider", "replay", "--replay-file", str(replay)),
        *("--workspace", str(tmp_path / "ws"), "--log-dir", str(tmp_path / "logs"), "--task", task),
        *extra,
    ]


def ask_answers() -> list[dict[str, Any]]:
    return [
        answer(None, "PENDING", result=QUESTION),
        answer("echo ahoy > greeting.txt"),
        answer(None, "FINISH", result="written"),
    ]


def run_cli(
    args: list[str], env: dict[str, str], cwd: Path, typed: list[str] | None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI; with ``typed``, stdin is a pseudo-terminal with those lines already typed (the
    terminal keeps each line until the program reads it), else stdin is not a terminal."""
    if typed is None:
        proc = subprocess.run(
            [sys.executable, "-m", "starweave.cli", *args],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DEADLINE,
        )  # fmt: skip
    else:
        master, slave = pty.openpty()
        try:
            for line in typed:
                os.write(master, line.encode() + b"\n")
            proc = subprocess.run(
                [sys.executable, "-m", "starweave.cli", *args],
                cwd=cwd, env=env, stdin=slave, capture_output=True, text=True, timeout=DEADLINE,
            )  # fmt: skip
        finally:
            os.close(slave)
            os.close(master)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def prompt_texts(tmp_path: Path, task: str) -> list[str]:
    return [json.dumps(r["prompt"]) for r in read_jsonl(tmp_path / "logs" / task / "request.log")]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_question_answered_on_the_terminal_reaches_the_next_prompt_and_later_runs(tmp_path: Path) -> None:
    env = cli_env(tmp_path, ASK_QUESTION="true", USE_CUSTOMIZATION="true")
    proc = run_cli(run_args(tmp_path, ask_answers(), "asked"), env, tmp_path, typed=["ahoy"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Question (PENDING)" in proc.stdout and QUESTION in proc.stdout and "Your answer" in proc.stdout
    prompts = prompt_texts(tmp_path, "asked")
    assert "ahoy" not in prompts[0] and '\\"answer\\": \\"ahoy\\"' in prompts[1]
    assert (tmp_path / "ws" / "greeting.txt").read_text() == "ahoy\n"
    saved = read_jsonl(tmp_path / "data" / "customization" / "global_memory.jsonl")
    assert [(r["question"], r["answer"], r["request"]) for r in saved] == [
        (QUESTION, "ahoy", "write a greeting")
    ]
    # A later run (no terminal this time) starts with the earlier answer in its prompt.
    later = run_cli(run_args(tmp_path, [answer(None, "FINISH", result="ok")], "later"), env, tmp_path, None)
    assert later.returncode == 0, later.stdout + later.stderr
    assert '\\"answer\\": \\"ahoy\\"' in prompt_texts(tmp_path, "later")[0]


def test_no_ask_and_no_terminal_go_on_without_an_answer_and_say_so(tmp_path: Path) -> None:
    env = cli_env(tmp_path, ASK_QUESTION="true", USE_CUSTOMIZATION="true")
    cases = (("no_ask", ["ahoy"], ("--no-ask",), "--no-ask"), ("no_tty", None, (), "no terminal to ask on"))
    for task, typed, extra, reason in cases:
        proc = run_cli(run_args(tmp_path, ask_answers(), task, *extra), env, tmp_path, typed)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        said = flat(proc.stdout)
        assert f"Question not asked ({reason}): {QUESTION} - continuing without an answer" in said
        assert "Your answer" not in said
        assert "No answer is available" in prompt_texts(tmp_path, task)[1]
    assert not (tmp_path / "data" / "customization" / "global_memory.jsonl").exists()


def test_with_json_the_question_goes_to_stderr(tmp_path: Path) -> None:
    env = cli_env(tmp_path, ASK_QUESTION="true")
    proc = run_cli(run_args(tmp_path, ask_answers(), "json", "--json"), env, tmp_path, typed=["ahoy"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["status"] == "FINISH"  # stdout holds the result only
    assert QUESTION in proc.stderr and "Your answer" in proc.stderr


def test_max_round_asks_for_a_follow_up_request_on_the_terminal(tmp_path: Path) -> None:
    env = cli_env(tmp_path, MAX_ROUND="2")
    answers = [
        answer("echo one > one.txt"),
        answer(None, "FINISH", result="one written"),
        answer("echo two > two.txt"),
        answer(None, "FINISH", result="two written"),
    ]
    proc = run_cli(run_args(tmp_path, answers, "rounds"), env, tmp_path, typed=["now write two.txt"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Round 2 of 2. Next request (empty to stop):" in proc.stdout
    records = read_jsonl(tmp_path / "logs" / "rounds" / "response.log")
    assert [(r["round_num"], r["request"]) for r in records] == [
        (0, "write a greeting"),
        (0, "write a greeting"),
        (1, "now write two.txt"),
        (1, "now write two.txt"),
    ]
    assert json.loads((tmp_path / "logs" / "rounds" / "result.json").read_text())["result"] == "two written"
    # Off a terminal: one round, nothing asked.
    single = run_cli(run_args(tmp_path, answers, "single"), env, tmp_path, typed=None)
    assert "Next request" not in single.stdout
    assert len(read_jsonl(tmp_path / "logs" / "single" / "response.log")) == 2


def test_ctrl_c_during_the_question_stops_the_run(tmp_path: Path) -> None:
    env = cli_env(tmp_path, ASK_QUESTION="true")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *run_args(tmp_path, ask_answers(), "stopped")],
        cwd=tmp_path, env=env, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    asked = threading.Event()
    out: list[str] = []

    def watch() -> None:
        assert proc.stdout is not None
        for line in iter(proc.stdout.readline, ""):
            out.append(line)
            if "Question (PENDING)" in line:
                asked.set()
        asked.set()  # the output ended: stop waiting

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    try:
        assert asked.wait(DEADLINE) and proc.poll() is None, "".join(out)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=DEADLINE)
        reader.join(DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(slave)
        os.close(master)
    assert proc.stderr is not None
    errors = proc.stderr.read()
    assert code == 130, "".join(out) + errors
    assert "Traceback" not in errors
    result = json.loads((tmp_path / "logs" / "stopped" / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert not (tmp_path / "ws" / "greeting.txt").exists()


def test_no_ask_refuses_a_dangerous_command_without_asking_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "victim.txt").write_text("keep me\n")
    answers = [answer("rm victim.txt"), answer(None, "FINISH", result="removed")]
    # A terminal where the user already typed "y": --no-ask does not read it.
    proc = run_cli(run_args(tmp_path, answers, "no_ask_rm", "--no-ask"), cli_env(tmp_path), tmp_path, ["y"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said = flat(proc.stdout)
    assert "Not asked (--no-ask): refused rm victim.txt - allow such actions with --yes" in said
    assert "Run it? [y/N]" not in said
    assert (tmp_path / "ws" / "victim.txt").read_text() == "keep me\n"
