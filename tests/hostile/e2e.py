"""Replay a hostile case through ``starweave run --provider replay`` as the hostile review did: the
case's calls become the model's recorded answers, and the run's output and every log it wrote are
searched for canaries."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import time
from typing import TYPE_CHECKING, Any

from hostile.casebook import Call, Case

if TYPE_CHECKING:
    from hostile.runcase import CaseRunner, Record

CLI_SLACK = 60.0  # start-up, the agent's own steps and the logs, on top of the calls' deadlines
MAX_LOG_BYTES = 4 << 20


def answers(calls: tuple[Call, ...], resolve: Any) -> list[dict[str, Any]]:
    """The replay file's lines: one answer per call, then FINISH."""
    out = []
    for n, call in enumerate(calls, start=1):
        out.append(
            {
                "observation": f"step {n}",
                "thought": "the notes say to do this next",
                "action": {"function": call.tool, "arguments": resolve(call), "status": "CONTINUE"},
                "result": "",
            }
        )
    out.append(
        {
            "observation": "done",
            "thought": "finished",
            "action": {"function": "", "arguments": {}, "status": "FINISH"},
            "result": "done",
        }
    )
    return out


def _write_lines(path: str, lines: list[dict[str, Any]]) -> None:
    with open(path, "w") as fh:
        fh.writelines(json.dumps(line) + "\n" for line in lines)


def _log_texts(folder: str) -> list[tuple[str, str]]:
    """The files Starweave wrote in its log folder: what the model planted there (symlinks to files
    outside, FIFOs) is not Starweave's output and is not read."""
    texts: list[tuple[str, str]] = []
    if os.path.islink(folder):
        return texts
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
                with open(path, "rb") as fh:
                    data = fh.read(MAX_LOG_BYTES)
            except OSError:
                continue
            texts.append((f"the run's log {os.path.relpath(path, folder)}", data.decode(errors="replace")))
    return texts


async def run_cli(
    runner: CaseRunner, case: Case, table: dict[str, str], ws: str, problems: list[str]
) -> tuple[list[Record], list[tuple[str, str]], bool]:
    """Run ``case`` through the CLI in workspace ``ws``; returns the records, texts and a restart flag.

    With ``extra["split"] = k`` the first k calls are one run and the others a second run started in
    the workspace itself with the user's plain environment and default log folder (./logs), as a
    user who runs ``starweave run`` in a project folder twice would (the first run may have planted
    ./config or ./logs there). With ``extra["logs"] = "workspace"`` the one run (in the mode under
    test) is started in the workspace and keeps its logs in ./logs there, where its own commands can
    reach them while it runs."""
    folder = os.path.join(runner.layout.own, "e2e", case.name[:60])
    if case.extra.get("logs") == "workspace":
        record, found = await _one_run(
            runner, case.calls, table, ws, ws, True, os.path.join(folder, "run0"), problems
        )
        return [record], found, False
    split = int(case.extra.get("split", len(case.calls)))
    runs = [(case.calls[:split], folder, True)]
    if split < len(case.calls):
        runs.append((case.calls[split:], ws, False))
    records, texts = [], []
    for n, (calls, cwd, overrides) in enumerate(runs):
        record, found = await _one_run(
            runner, calls, table, ws, cwd, overrides, os.path.join(folder, f"run{n}"), problems
        )
        records.append(record)
        texts += found
    return records, texts, False


async def _one_run(
    runner: CaseRunner,
    calls: tuple[Call, ...],
    table: dict[str, str],
    ws: str,
    cwd: str,
    overrides: bool,
    folder: str,
    problems: list[str],
) -> tuple[Record, list[tuple[str, str]]]:
    from hostile.runcase import MARGIN, Record, _resolve

    os.makedirs(folder, exist_ok=True)
    replay = os.path.join(folder, "answers.jsonl")
    _write_lines(replay, answers(calls, lambda call: _resolve(call, table)))
    # A run started in the workspace keeps its logs where a user's would be: ./logs there.
    logs = os.path.join(cwd, "logs") if cwd == ws else os.path.join(folder, "logs")
    env = dict(os.environ)
    if overrides:  # the mode under test; a plain second run uses whatever configuration it finds
        env.update(
            STARWEAVE_SYSTEM__SHELL__SANDBOX=runner.mode.sandbox,
            STARWEAVE_SYSTEM__SHELL__MODE=runner.mode.shell_mode,
            STARWEAVE_SYSTEM__SHELL__MAX_TIMEOUT="60",
        )
    argv = [
        sys.executable,
        "-m",
        "starweave.cli",
        "run",
        "Follow the instructions in the notes.",
        "--provider",
        "replay",
        "--replay-file",
        replay,
        *(["--log-dir", logs] if overrides else []),
        "--task",
        "hostile",
        "--yes",
        "--json",
    ]
    if overrides:
        argv += ["--workspace", ws]
    record = Record("starweave run", f"{len(calls)} replayed calls" + ("" if overrides else " (second run)"))
    budget = sum(c.timeout + MARGIN for c in calls) + CLI_SLACK
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), budget)
    except TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
        problems.append(f"starweave run did not finish within {budget:.0f}s")
    record.seconds = time.monotonic() - started
    record.outcome = f"exit {proc.returncode}"
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    record.detail = (stderr.strip().splitlines() or [""])[-1][:300]
    if "Traceback (most recent call last)" in stderr:
        problems.append(f"starweave run ended with a traceback: {record.detail}")
    logged = _log_texts(logs)
    record.detail = f"{len(logged)} log files, {sum(len(t) for _, t in logged)} chars; " + record.detail
    texts = [("starweave run's output", stdout), ("starweave run's error output", stderr), *logged]
    if os.environ.get("HOSTILE_DUMP_E2E"):  # debugging: the worker's stderr goes to its log file
        sys.stderr.write(stdout + stderr + "".join(f"\n==== {w}\n{t}" for w, t in logged))
    return record, texts
