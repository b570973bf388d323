"""Shell sandbox benchmarks: what confinement costs per command, and what the policy check costs.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/sandbox_bench.py [--runs N] [--lines N]``).

1. Per command: ``run_command("true")`` through the whole runner with SHELL.SANDBOX none (the
   launcher with limits and seccomp), bubblewrap and Landlock, next to starting ``/bin/true``
   directly (the floor every command pays). The difference is the sandbox's process start.
2. Preparation alone (no process): building the launcher's spec and the bubblewrap command line
   (hidden paths included), or the Landlock ruleset spec.
3. The policy check: ``ShellPolicy.evaluate`` on a set of realistic command lines (pipes, globs,
   redirections, git, find, sed, awk, tar ...) and on refused ones, per command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from starweave.config import ShellConfig
from starweave.tools.servers.shell.landlock import landlock_abi
from starweave.tools.servers.shell.launch import Launch
from starweave.tools.servers.shell.policy import ShellPolicy
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.sandbox import probe_bwrap_sync, probe_landlock_sync

LINES = [
    "ls -la",
    "ls *.txt | sort | head -5",
    "cat notes.txt | grep -n second | wc -l",
    "mkdir -p out && echo hello > out/a.txt && cat out/a.txt",
    "find . -name '*.py' -type f | wc -l",
    "grep -rn TODO src",
    "sed -n '1,3p' notes.txt",
    "awk '{print $1}' notes.txt | sort | uniq -c",
    "git status --short",
    "git log --oneline -5",
    "tar -czf out.tgz src && tar -tzf out.tgz",
    "python3 script.py --flag value",
    "du -sh . && df -h",
    "head -c 100 notes.txt; tail -n 2 notes.txt",
    "cp -r src backup && diff -r src backup",
]
REFUSED = [
    "cat /etc/shadow",
    "rm -rf /",
    "echo $(id)",
    "sort --outp=/etc/x notes.txt",
    "find . -exec sh -c id \\;",
    "python3 -c 'import os'",
]


def summarise(samples: list[float]) -> dict[str, float]:
    """Median, p95 and mean in milliseconds."""
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[max(int(len(ordered) * 0.95) - 1, 0)] * 1000,
        "mean_ms": statistics.fmean(ordered) * 1000,
        "n": float(len(ordered)),
    }


async def timed(call: Callable[[], Awaitable[Any]], n: int, warmup: int = 5) -> list[float]:
    """Wall time of ``n`` sequential awaited calls after a warm-up."""
    for _ in range(warmup):
        await call()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


def timed_sync(call: Callable[[], Any], n: int) -> list[float]:
    """Wall time of ``n`` calls of ``call``."""
    call()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def workspace(root: Path, name: str) -> Path:
    """A small project to run the command lines in."""
    ws = root / name
    (ws / "src").mkdir(parents=True)
    (ws / "notes.txt").write_text("first line\nsecond line\nthird line\n")
    (ws / "src" / "a.py").write_text("# TODO: something\nprint('a')\n")
    (ws / "script.py").write_text("import sys\nprint(sys.argv)\n")
    return ws


async def bench_commands(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """Per command cost of each sandbox through run_command, and the bare process floor."""

    async def bare() -> None:
        proc = await asyncio.create_subprocess_exec("/bin/true")
        await proc.wait()

    out = {"start /bin/true directly (floor)": summarise(await timed(bare, runs))}
    available = {
        "none": (True, ""),
        "bwrap": probe_bwrap_sync(False),
        "landlock": probe_landlock_sync(False),
    }
    for kind, (ok, detail) in available.items():
        label = f"run_command('true'), SANDBOX {kind}"
        if not ok:
            print(f"{label}: skipped ({detail})", file=sys.stderr)
            continue
        ws = workspace(root, f"cmd-{kind}")
        policy = ShellPolicy(ShellConfig(workspace=str(ws), sandbox=kind), sandbox=kind)

        async def one(policy: ShellPolicy = policy) -> None:
            result = await run_command("true", policy=policy, timeout=60)
            if not result.get("success"):
                raise SystemExit(f"benchmark command failed: {result}")

        out[label] = summarise(await timed(one, runs))
    return out


def bench_preparation(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """Building the command line without starting anything."""
    ws = str(workspace(root, "prep"))
    config = ShellConfig(workspace=ws)
    out = {}
    for kind in ("none", "bwrap", "landlock"):
        launch = Launch(kind, config, ws, bwrap_exe="/usr/bin/bwrap", landlock_abi=landlock_abi() or 1)
        env = launch.base_env()

        def prepare(launch: Launch = launch, env: dict[str, str] = env) -> None:
            launch.prepare("/bin/true", ["true"], ws, env).close()

        samples = timed_sync(prepare, runs)
        out[f"prepare the launch ({kind})"] = summarise(samples)
    return out


def bench_policy(root: Path, lines: int) -> dict[str, dict[str, float]]:
    """ShellPolicy.evaluate per command line, allowed and refused lines."""
    ws = workspace(root, "policy")
    policy = ShellPolicy(ShellConfig(workspace=str(ws)), sandbox="bwrap")
    out = {}
    for label, batch in (("allowed-looking", LINES), ("refused", REFUSED)):
        samples = []
        for i in range(lines):
            line = batch[i % len(batch)]
            start = time.perf_counter()
            policy.evaluate(line)
            samples.append(time.perf_counter() - start)
        out[f"policy check per line ({label})"] = summarise(samples)
    return out


async def main(runs: int, lines: int) -> dict[str, dict[str, float]]:
    """Every measure, in a throwaway folder."""
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(await asyncio.to_thread(os.path.realpath, tmp))
        results.update(await bench_commands(root, runs))
        results.update(bench_preparation(root, runs))
        results.update(bench_policy(root, lines))
    return results


def render(results: dict[str, dict[str, float]]) -> None:
    """Print a table."""
    table = Table(title="shell sandbox and policy (lower is better)")
    for column in ("measure", "median ms", "p95 ms", "mean ms", "n"):
        table.add_column(column)
    for name, figures in results.items():
        table.add_row(
            name,
            f"{figures['median_ms']:.3f}",
            f"{figures['p95_ms']:.3f}",
            f"{figures['mean_ms']:.3f}",
            str(int(figures["n"])),
        )
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=50, help="commands per sandbox")
    parser.add_argument("--lines", type=int, default=1500, help="command lines for the policy check")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    figures = asyncio.run(main(args.runs, args.lines))
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
    else:
        render(figures)
