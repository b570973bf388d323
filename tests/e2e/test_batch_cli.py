"""``starweave run --mode batch_normal --plan`` as a user runs it: a real process, real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e.test_cli_errors import assert_one_line_usage_error, starweave
from e2e.test_cli_interrupt import CANARY_KEY, interrupt, stalling_model, start_cli, write_step
from helpers.linux_replay import answer

#: The LinuxAgent on an OpenAI-compatible model (the stalling server), without the sandbox.
MODEL_ENV = {
    **{
        f"STARWEAVE_APP_AGENT__{key}": value
        for key, value in (("API_TYPE", "openai"), ("API_KEY", CANARY_KEY))
    },
    "STARWEAVE_APP_AGENT__API_MODEL": "gpt-4o-mini",
    "STARWEAVE_SYSTEM__SHELL__SANDBOX": "none",
}


def jsonl(path: Path, answers: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")


def batch_args(tmp_path: Path, plan: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--mode",
        "batch_normal",
        "--plan",
        str(plan),
        "--provider",
        "replay",
        "--replay-file",
        str(tmp_path / "replay"),
        "--workspace",
        str(tmp_path / "ws"),
        "--log-dir",
        str(tmp_path / "logs"),
        "--task",
        "b1",
        *extra,
    ]


def test_a_batch_with_a_failing_plan_prints_the_table_and_exits_1(tmp_path: Path) -> None:
    plans, replay = tmp_path / "plans", tmp_path / "replay"
    plans.mkdir()
    replay.mkdir()
    (plans / "one.json").write_text('{"task": "write one.txt", "close": false}', encoding="utf-8")
    (plans / "two.json").write_text('{"task": "the impossible"}', encoding="utf-8")
    jsonl(replay / "one.jsonl", [answer("echo 1 > one.txt"), answer(None, "FINISH", result="one.txt")])
    jsonl(replay / "two.jsonl", [answer(None, "FAIL", result="cannot")])

    proc = starweave(*batch_args(tmp_path, plans), cwd=tmp_path)

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "batch b1: 1/2 finished" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if "two" in line and "FAIL" in line)
    assert "$0.0000" in row
    assert (tmp_path / "ws" / "one.txt").read_text() == "1\n"
    summary = json.loads((tmp_path / "logs" / "b1" / "summary.json").read_text())
    assert [(r["task"], r["status"], r["steps"]) for r in summary["plans"]] == [
        ("one", "FINISH", 2),
        ("two", "FAIL", 1),
    ]
    # All finished: exit 0; --json prints the summary on stdout.
    (plans / "two.json").unlink()
    proc = starweave(*batch_args(tmp_path, plans, "--json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["status"] == "FINISH"


def test_plan_and_mode_errors_are_one_line(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"task": "x", "close": True}', encoding="utf-8")
    proc = starweave(*batch_args(tmp_path, plan), cwd=tmp_path)
    assert_one_line_usage_error(proc, str(plan), "not Python's True")
    proc = starweave("run", "--plan", str(plan), cwd=tmp_path)
    assert_one_line_usage_error(proc, "--plan runs with --mode batch_normal")
    proc = starweave("run", "--mode", "batch_normal", cwd=tmp_path)
    assert_one_line_usage_error(proc, "needs --plan")
    proc = starweave("run", "--mode", "follower", "--plan", str(plan), cwd=tmp_path)
    assert_one_line_usage_error(proc, "--agent host")
    proc = starweave("run", cwd=tmp_path)
    assert_one_line_usage_error(proc, "missing the request")


def test_ctrl_c_stops_the_batch_after_writing_what_is_done(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    for name in ("a", "b", "c"):
        (plans / f"{name}.json").write_text(json.dumps({"task": f"write {name}.txt"}), encoding="utf-8")
    done = json.dumps(answer(None, "FINISH", result="a.txt written"))
    # Plan a: two answers; plan b's first call is held open, and Ctrl+C comes while it waits.
    with stalling_model([write_step("a.txt", "a"), done]) as model:
        proc = start_cli(
            [
                "run",
                "--mode",
                "batch_normal",
                "--plan",
                "plans",
                "-w",
                "ws",
                *("--log-dir", "logs", "--task", "nightly"),
            ],
            tmp_path,
            {**MODEL_ENV, "STARWEAVE_APP_AGENT__API_BASE": model.base_url},
        )
        out, errors = interrupt(proc, model)
    assert proc.returncode == 130, out + errors
    assert "Traceback" not in errors
    summary = json.loads((tmp_path / "logs" / "nightly" / "summary.json").read_text())
    assert [(r["task"], r["status"]) for r in summary["plans"]] == [
        ("a", "FINISH"),
        ("b", "interrupted"),
        ("c", "not run"),
    ]
    assert summary["status"] == "FAIL" and "1/3 finished" in out
    assert (tmp_path / "ws" / "a.txt").read_text() == "a"
