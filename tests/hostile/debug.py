"""Run hostile cases outside pytest and print every verdict, passing ones too (as root)::

    .venv/bin/python tests/hostile/debug.py MODE[,MODE...] [CASE-PREFIX ...] [--e2e] [--failed-only]

With no prefix every case runs. Prints one block per case: the calls, their outcomes and the problems,
then a summary per family.
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile
import threading

sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]

from hostile.casebook import all_cases  # noqa: E402
from hostile.oracles import new_canaries  # noqa: E402
from hostile.session import explain  # noqa: E402
from hostile.supervisor import Job, run_job  # noqa: E402


def main(argv: list[str]) -> int:
    """Entry point; returns the number of failing cases (capped at 100)."""
    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    modes, prefixes = args[0].split(","), args[1:]
    cases = all_cases()
    names = [n for n in cases if not prefixes or any(n.startswith(p) for p in prefixes)]
    kind = "e2e" if "--e2e" in flags else "mcp"
    if kind == "e2e":
        names = [n for n in names if cases[n].e2e]
    workers = int(os.environ.get("HOSTILE_WORKERS", "4"))
    per_mode = max(1, workers // len(modes))
    jobs = []
    for mode in modes:
        shards = [Job(mode) for _ in range(per_mode)]
        for n, name in enumerate(names):
            shards[n % per_mode].items.append((kind, name))
        jobs += [j for j in shards if j.items]
    results: dict = {}
    log_dir = tempfile.mkdtemp(prefix="hostile-debug-")
    canaries = new_canaries()
    threads = [
        threading.Thread(target=lambda j=j: results.update(run_job(j, cases, canaries, log_dir)))
        for j in jobs
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failing: collections.Counter[tuple[str, str]] = collections.Counter()
    total: collections.Counter[tuple[str, str]] = collections.Counter()
    for (mode, _, name), verdict in sorted(results.items()):
        total[(mode, cases[name].family)] += 1
        if verdict["problems"]:
            failing[(mode, cases[name].family)] += 1
        if verdict["problems"] or "--failed-only" not in flags:
            status = "FAIL" if verdict["problems"] else "ok"
            print(f"[{status}] " + explain(cases[name], verdict), end="\n\n")
    for key in sorted(total):
        print(f"{key[0]:12} {key[1]:12} {failing[key]:3} failing of {total[key]}")
    print(f"worker logs: {log_dir}")
    return min(100, sum(failing.values()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
