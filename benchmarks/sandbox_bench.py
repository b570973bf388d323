"""Shell sandbox benchmarks: what a command costs through bash in each sandbox, and where it goes.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/sandbox_bench.py [--runs N]``).

1. Per command: ``run_command("true")`` through the whole runner (bash in the launcher) with
   SHELL.SANDBOX none (the launcher with limits and seccomp, unconfined), bubblewrap and Landlock,
   next to starting ``/bin/true`` directly (the floor every command pays); and two realistic lines
   (a pipeline of three tools, a loop) through the same path.
2. Where the time goes, without a sandbox: bash alone (``bash -c /bin/true`` execs the program in
   its own process) and bash with the EXIT trap the runner puts in front of the line (it reports the
   final folder, and bash can no longer exec the last command: one fork more). (``true`` alone is a
   bash builtin: no program starts at all.)
3. Preparation alone (no process): building the launcher's spec and the bubblewrap command line
   (hidden paths included), or the Landlock ruleset spec.
4. The confirmation classifier (``dangerous_reason``) per command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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
from starweave.tools.sandbox.choice import probe_bwrap_sync, probe_landlock_sync
from starweave.tools.sandbox.landlock import landlock_abi
from starweave.tools.sandbox.launch import CLEAN_PATH, Launch, clean_env
from starweave.tools.servers.shell.danger import dangerous_reason
from starweave.tools.servers.shell.runner import BASH_OPTIONS, bash_program, run_command
from starweave.tools.servers.shell.session import ShellSession

# Lines both the old argv policy and bash run, so the two paths can be compared.
REALISTIC = {
    "pipeline": "cat notes.txt | grep -n second | wc -l",
    "loop": "for f in *.txt; do wc -l $f; done",
}
LINES = [
    "ls -la",
    "ls *.txt | sort | head -5",
    "for f in *.txt; do echo $f; done",
    "find . -type f -exec chmod 644 {} +",
    "mkdir -p out && echo hello > out/a.txt && cat out/a.txt",
    'x="$(git status --short)"; echo "$x"',
    "cat <<EOF > notes.md\nrm is only a word here\nEOF",
    "python3 script.py --flag value",
    "rm -rf build && git push",
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
    (ws / "todo.txt").write_text("one\ntwo\n")
    (ws / "src" / "a.py").write_text("# TODO: something\nprint('a')\n")
    (ws / "script.py").write_text("import sys\nprint(sys.argv)\n")
    return ws


async def _exec(*argv: str, env: dict[str, str] | None = None) -> None:
    proc = await asyncio.create_subprocess_exec(*argv, env=env, stdin=asyncio.subprocess.DEVNULL)
    if await proc.wait() != 0:
        raise SystemExit(f"benchmark process failed: {argv}")


async def bench_commands(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """Per command cost of each sandbox through run_command, and the bare process floor."""
    out = {"start /bin/true directly (floor)": summarise(await timed(lambda: _exec("/bin/true"), runs))}
    available = {
        "none": (True, ""),
        "bwrap": probe_bwrap_sync(False),
        "landlock": probe_landlock_sync(False),
    }
    for kind, (ok, detail) in available.items():
        if not ok:
            print(f"SANDBOX {kind}: skipped ({detail})", file=sys.stderr)
            continue
        ws = workspace(root, f"cmd-{kind}")
        session = ShellSession(ShellConfig(workspace=str(ws), sandbox=kind), sandbox=kind)
        for label, line in {"true": "true", **REALISTIC}.items():

            async def one(line: str = line, session: ShellSession = session) -> None:
                result = await run_command(line, session=session, timeout=60)
                if not result.get("success"):
                    raise SystemExit(f"benchmark command failed: {result}")

            out[f"run_command({label!r}), SANDBOX {kind}"] = summarise(await timed(one, runs))
    return out


async def bench_bash(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """bash alone, and with the runner's EXIT trap, unconfined: the cost of the shell itself."""
    bash = shutil.which("bash", path=CLEAN_PATH) or "/bin/bash"
    env = clean_env(str(root), str(root))
    read, write = os.pipe()  # the trap's report goes somewhere, as in the runner
    os.set_blocking(read, False)
    try:
        trapped = bash_program("/bin/true", write)
        plain = await timed(lambda: _exec(bash, *BASH_OPTIONS, "-c", "/bin/true", env=env), runs)

        async def with_trap() -> None:
            proc = await asyncio.create_subprocess_exec(
                bash,
                *BASH_OPTIONS,
                "-c",
                trapped,
                env=env,
                pass_fds=(write,),
                stdin=asyncio.subprocess.DEVNULL,
            )
            await proc.wait()
            while True:
                try:
                    if not os.read(read, 65536):
                        break
                except BlockingIOError:
                    break

        return {
            "bash -c '/bin/true' directly (exec, no trap)": summarise(plain),
            "bash -c 'trap ... EXIT; /bin/true' directly (fork)": summarise(await timed(with_trap, runs)),
        }
    finally:
        os.close(read)
        os.close(write)


def bench_preparation(root: Path, runs: int) -> dict[str, dict[str, float]]:
    """Building the command line without starting anything."""
    ws = str(workspace(root, "prep"))
    config = ShellConfig(workspace=ws)
    out = {}
    for kind in ("none", "bwrap", "landlock"):
        launch = Launch(kind, config, ws, bwrap_exe="/usr/bin/bwrap", landlock_abi=landlock_abi() or 1)
        env = launch.base_env()

        def prepare(launch: Launch = launch, env: dict[str, str] = env) -> None:
            launch.prepare("/bin/bash", ["bash", "-c", "true"], ws, env).close()

        out[f"prepare the launch ({kind})"] = summarise(timed_sync(prepare, runs))
    return out


def bench_classifier(lines: int) -> dict[str, dict[str, float]]:
    """dangerous_reason per command line (it runs before every command, for CONFIRM)."""
    samples = []
    for i in range(lines):
        line = LINES[i % len(LINES)]
        start = time.perf_counter()
        dangerous_reason(line)
        samples.append(time.perf_counter() - start)
    return {"confirmation classifier per line": summarise(samples)}


async def main(runs: int, lines: int) -> dict[str, dict[str, float]]:
    """Every measure, in a throwaway folder."""
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(await asyncio.to_thread(os.path.realpath, tmp))
        results.update(await bench_commands(root, runs))
        results.update(await bench_bash(root, runs))
        results.update(bench_preparation(root, runs))
        results.update(bench_classifier(lines))
    return results


def render(results: dict[str, dict[str, float]]) -> None:
    """Print a table."""
    table = Table(title="shell sandbox (lower is better)")
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
    parser.add_argument("--runs", type=int, default=50, help="commands per measure")
    parser.add_argument("--lines", type=int, default=1500, help="command lines for the classifier")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    figures = asyncio.run(main(args.runs, args.lines))
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
    else:
        render(figures)
