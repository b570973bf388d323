"""Drive hostile workers from pytest: start them in isolated roots, watch each case's deadline,
restart a worker after a hang or a crash, and collect one verdict per (mode, kind, case).

A worker that stops answering during a case is killed (its whole namespace goes with it); the case
is reported as a hang and a fresh worker takes the remaining cases. Cases are spread over
``HOSTILE_WORKERS`` workers (default 9, a third per mode) running in parallel.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from hostile.casebook import Case
from hostile.isolation import (
    CODE,
    PYTHON,
    REPO,
    SITE,
    isolated_command,
    make_pids_cgroup,
    pids_cap_hits,
    remove_pids_cgroup,
    strategy,
)
from hostile.modes import MODES
from hostile.oracles import ENV_CANARIES

READY_BUDGET = 180.0  # seconds for a worker to set up and run its control command
CASE_SLACK = 30.0  # per case, on top of the calls' own deadlines

Key = tuple[str, str, str]  # (mode, kind, case)


@dataclass
class Job:
    """Cases for one worker: the mode, then (kind, case name) pairs in order."""

    mode: str
    items: list[tuple[str, str]] = field(default_factory=list)


def case_budget(case: Case, kind: str) -> float:
    """How long the supervisor waits for a case's verdict before it calls it a hang."""
    from hostile.e2e import CLI_SLACK
    from hostile.runcase import GRACE, MARGIN, SETTLE

    calls = sum(c.timeout + MARGIN for c in case.calls)
    return calls + GRACE + SETTLE + CASE_SLACK + (CLI_SLACK if kind == "e2e" else 0.0)


def worker_env(canaries: dict[str, str]) -> dict[str, str]:
    """The environment a worker starts with: the canary API keys of a real user's shell included."""
    code = [f"{CODE}/repo/tests", f"{CODE}/repo", f"{CODE}/site"]
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "PYTHONPATH": os.pathsep.join(code),
        "SWH_REPO_PATH": REPO,  # where attacks look for Starweave's code (its copy in the overlay)
        "SWH_SITE_PATH": SITE,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "LANG": "C.UTF-8",
        "HOME": "/root",
    }
    for name, desc in ENV_CANARIES.items():
        env[name] = canaries[desc]
    if os.environ.get("HOSTILE_DUMP_E2E"):
        env["HOSTILE_DUMP_E2E"] = "1"
    return env


class _Worker:
    """One worker process and a thread that reads its protocol lines."""

    def __init__(
        self, job_mode: str, items: list[tuple[str, str]], canaries: dict[str, str], log: str
    ) -> None:
        self.layers = tempfile.mkdtemp(prefix="swh-layers-")
        fake = strategy() == "userns"
        self.cgroup = None if fake else make_pids_cgroup(f"swh-{os.getpid()}-{os.path.basename(self.layers)}")
        argv = isolated_command(
            self.layers,
            [PYTHON, "-m", "hostile.worker"],
            self.cgroup,
            protect_proc=not MODES[job_mode].unprivileged,
        )
        self.stderr = open(log, "ab")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            argv,
            env=worker_env(canaries),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd="/",
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {
            "mode": job_mode,
            "cases": [n for k, n in items if k == "mcp"],
            "e2e": [n for k, n in items if k == "e2e"],
            "canaries": canaries,
        }
        self.proc.stdin.write(json.dumps(request).encode())
        self.proc.stdin.close()
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                self.lines.put(json.loads(raw))
            except json.JSONDecodeError:
                continue
        self.lines.put(None)

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next protocol line, None at EOF; raises queue.Empty after ``timeout``."""
        return self.lines.get(timeout=max(timeout, 0.1))

    def close(self) -> int | None:
        """Kill the worker's namespace and clean up; returns its exit code."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait()
        self.stderr.close()
        remove_pids_cgroup(self.cgroup)
        # Still a mount point for a moment, or not empty: it is only an empty folder in /tmp.
        with contextlib.suppress(OSError):
            os.rmdir(self.layers)
        return code


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 1500))
            return fh.read().decode(errors="replace").strip().replace("\n", " | ")[-600:]
    except OSError:
        return ""


def run_job(
    job: Job, cases: dict[str, Case], canaries: dict[str, str], log_dir: str
) -> dict[Key, dict[str, Any]]:
    """Run one job to the end, restarting its worker as often as needed."""
    results: dict[Key, dict[str, Any]] = {}
    pending = list(job.items)
    launches = 0
    while pending:
        launches += 1
        log = os.path.join(log_dir, f"{job.mode}-{os.getpid()}-{threading.get_ident()}-{launches}.log")
        worker = _Worker(job.mode, pending, canaries, log)
        try:
            pending = _drive(worker, job.mode, pending, cases, results, log)
        finally:
            worker.close()
    return results


def _fail_all(mode: str, items: list[tuple[str, str]], results: dict[Key, dict[str, Any]], why: str) -> None:
    for kind, name in items:
        results[(mode, kind, name)] = {
            "case": name,
            "kind": kind,
            "mode": mode,
            "problems": [why],
            "calls": [],
        }


def _stopped(worker: _Worker) -> bool:
    """Whether the worker process itself was stopped (SIGSTOP), which no deadline inside it can see."""
    try:
        for proc in psutil.Process(worker.proc.pid).children(recursive=True):
            if "hostile.worker" in " ".join(proc.cmdline()) and proc.status() == psutil.STATUS_STOPPED:
                return True
    except psutil.Error:
        return False
    return False


def _await_verdict(worker: _Worker, budget: float) -> tuple[dict[str, Any] | None, str]:
    """The next result line (None at EOF), or why there is none: a hang or a stopped worker."""
    deadline = time.monotonic() + budget
    while True:
        try:
            line = worker.next(min(1.0, deadline - time.monotonic()))
        except queue.Empty:
            if _stopped(worker):
                return None, "the worker process was stopped (SIGSTOP) by the attack"
            if time.monotonic() >= deadline:
                return None, f"hang: no verdict within {budget:.0f}s"
            continue
        if line is None or line.get("event") != "start":
            return line, ""


def _drive(
    worker: _Worker,
    mode: str,
    pending: list[tuple[str, str]],
    cases: dict[str, Case],
    results: dict[Key, dict[str, Any]],
    log: str,
) -> list[tuple[str, str]]:
    """Feed ``worker`` until it finishes, hangs or dies; returns the items still to run."""
    try:
        ready = worker.next(READY_BUDGET)
    except queue.Empty:
        ready = None
    if ready is None or ready.get("event") != "ready":
        _fail_all(mode, pending, results, f"the worker did not start: {_tail(log)}")
        return []
    if ready.get("control_problem"):
        _fail_all(mode, pending, results, f"this mode cannot run commands here: {ready['control_problem']}")
        return []
    remaining = list(pending)
    hits = pids_cap_hits(worker.cgroup)
    while remaining:
        kind, name = remaining[0]
        budget = case_budget(cases[name], kind)
        line, why = _await_verdict(worker, budget)
        if why:
            _fail_all(mode, [(kind, name)], results, f"{why}; the worker was killed ({_tail(log)[-200:]})")
            return remaining[1:]
        if line is None:
            code = worker.proc.wait()
            _fail_all(
                mode,
                [(kind, name)],
                results,
                f"the worker died during the case (exit code {code}): the attack reached Starweave's "
                f"own process ({_tail(log)[-300:]})",
            )
            return remaining[1:]
        now = pids_cap_hits(worker.cgroup)
        if now > hits:
            line["problems"] = [
                *line.get("problems", []),
                "commands reached the harness's safety cap on processes (no process-count limit)",
            ]
        hits = now
        results[(mode, line["kind"], line["case"])] = line
        remaining.pop(0)
        if line.get("restart"):
            return remaining
    return []
