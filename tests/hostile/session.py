"""The verdicts of a pytest session's hostile cases: every selected (mode, kind, case) runs once, in
parallel isolated workers, on first use; test items then read their verdict."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import pytest

from hostile.casebook import Case, all_cases
from hostile.isolation import skip_reason
from hostile.modes import MODES
from hostile.oracles import new_canaries
from hostile.supervisor import Job, Key, run_job

SELECTED = pytest.StashKey[set[Key]]()
CGROUP_CONTROLLERS = ("/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/unified/cgroup.controllers")


def needs_missing(case: Case) -> str:
    """Why this machine cannot show what ``case`` tests ('' when it can). A case with
    ``extra["needs"] == "memory-cgroup"`` tests the per-command memory limit, which Starweave sets
    through the cgroup v2 memory controller; without one only the per-process limits hold, as
    ``starweave doctor`` says."""
    if case.extra.get("needs") != "memory-cgroup":
        return ""
    for path in CGROUP_CONTROLLERS:
        try:
            with open(path) as fh:
                if "memory" in fh.read().split():
                    return ""
        except OSError:
            continue
    return "no cgroup v2 memory controller here: the per-command memory limit cannot hold (doctor says so)"


class Verdicts:
    """The verdicts of the session's hostile cases, computed on first use."""

    def __init__(self, config: pytest.Config, log_dir: str) -> None:
        self.config, self.log_dir = config, log_dir
        self._results: dict[Key, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def get(self, key: Key) -> dict[str, Any]:
        """The verdict for ``key``; runs every selected case the first time."""
        with self._lock:
            if self._results is None:
                self._results = self._run_all()
        return self._results[key]

    def _run_all(self) -> dict[Key, dict[str, Any]]:
        empty: set[Key] = set()
        chosen = self.config.stash.get(SELECTED, empty)
        selected = sorted(chosen)
        cases = all_cases()
        canaries = new_canaries()
        workers = max(1, int(os.environ.get("HOSTILE_WORKERS", "9")))
        modes = sorted({mode for mode, _, _ in selected})
        per_mode = max(1, workers // max(1, len(modes)))
        jobs: list[Job] = []
        for mode in modes:
            items = [(kind, name) for m, kind, name in selected if m == mode]
            items.sort(key=lambda item: (item[0] == "e2e", cases[item[1]].dos, item[1]))
            shards = [Job(mode) for _ in range(per_mode)]
            for n, item in enumerate(items):
                shards[n % per_mode].items.append(item)
            jobs += [job for job in shards if job.items]
        results: dict[Key, dict[str, Any]] = {}
        for mode, kind, name in selected:
            why = skip_reason(MODES[mode].unprivileged) or needs_missing(cases[name])
            if why:
                results[(mode, kind, name)] = {"skip": why, "problems": []}
        for job in jobs:
            job.items = [(kind, name) for kind, name in job.items if not needs_missing(cases[name])]
        jobs = [job for job in jobs if job.items]
        jobs = [j for j in jobs if not skip_reason(MODES[j.mode].unprivileged)]
        threads = [
            threading.Thread(target=lambda j=job: results.update(run_job(j, cases, canaries, self.log_dir)))
            for job in jobs
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # Every verdict, passing ones too, for the record and for diagnosing a failure later.
        with open(os.path.join(self.log_dir, "verdicts.json"), "w") as fh:
            json.dump(
                [{"key": list(key), **verdict} for key, verdict in sorted(results.items())], fh, indent=1
            )
        return results


def case_params(kind: str, modes: list[str], only_e2e: bool = False) -> list[Any]:
    """``pytest.param``s of (mode, kind, case) for every case (e2e ones only with ``only_e2e``)."""
    out = []
    for name, found in all_cases().items():
        if only_e2e and not found.e2e:
            continue
        for mode in modes:
            out.append(pytest.param(mode, kind, name, id=f"{mode}/{found.family}/{name}"))
    return out


def explain(case: Case, verdict: dict[str, Any]) -> str:
    """A failure message: what the case tried, what each call did and what went wrong."""
    lines = [
        f"{case.family}/{case.name} ({verdict.get('mode')}, {verdict.get('kind')}, "
        f"{verdict.get('seconds', '?')}s): " + case.attack
    ]
    for call in verdict.get("calls", []):
        lines.append(
            f"  {call['tool']} {call['arg']!r} -> {call['outcome']} ({call['seconds']}s) "
            f"{call['detail'][:160]!r}"
        )
    lines += [f"  PROBLEM: {p}" for p in verdict.get("problems", [])]
    return "\n".join(lines)
