"""Framework overhead benchmarks: an agent step without the model, and local MCP round trips.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/run.py [--steps N] [--calls N]``).

1. MCP call: Command → LocalCommandDispatcher → CommandRouter → Computer → in-process MCP
   client → MCP server → tool → Result. Measured with ``read_file`` (no subprocess: the MCP path
   itself), and with ``execute_command`` running ``true`` without and with the bubblewrap sandbox
   (process start-up included).
2. Agent step: a LinuxSession on the replay provider, each step a ``read_file`` call: processor,
   strategies, middleware (response log), dispatcher and MCP call; everything but the model.

Targets (issue #2): below 5 ms per step and below 3 ms per local MCP call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from starweave.commands import Command, LocalCommandDispatcher
from starweave.config import ShellConfig, load_config
from starweave.session.console import ConsoleView
from starweave.session.runner import RunOptions, run_linux_task
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers import register_builtin_servers


def summarise(samples: list[float]) -> dict[str, float]:
    """Median, p95 and mean in milliseconds."""
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[int(len(ordered) * 0.95) - 1] * 1000,
        "mean_ms": statistics.fmean(ordered) * 1000,
        "n": float(len(ordered)),
    }


async def time_calls(call: Callable[[], Awaitable[Any]], n: int, warmup: int = 20) -> list[float]:
    """Wall time of ``n`` sequential calls after a warm-up."""
    for _ in range(warmup):
        await call()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


async def bench_mcp(workspace: Path, sandbox: str, calls: int) -> dict[str, dict[str, float]]:
    """Round trips of local MCP calls through the whole command layer."""
    register_builtin_servers()
    shell = ShellConfig.model_validate({"workspace": str(workspace), "sandbox": sandbox})
    config = load_config(env={})
    servers = MCPServerManager(shell)
    computers = ComputerManager(config.mcp, servers)
    dispatcher = LocalCommandDispatcher(CommandRouter(computers), agent_name="LinuxAgent")
    (workspace / "small.txt").write_text("hello\n")
    read = Command(tool_name="read_file", parameters={"path": "small.txt"}, tool_type="action")
    run_true = Command(tool_name="execute_command", parameters={"command": "true"}, tool_type="action")

    async def one(command: Command) -> None:
        results = await dispatcher.execute_commands([command.model_copy()])
        if not results[0].ok:
            raise SystemExit(f"benchmark call failed: {results[0].error} {results[0].result}")

    try:
        out = {"read_file (MCP path)": summarise(await time_calls(lambda: one(read), calls))}
        label = f"execute_command 'true' (sandbox={sandbox})"
        out[label] = summarise(await time_calls(lambda: one(run_true), max(calls // 5, 50)))
    finally:
        await computers.aclose()
        await servers.aclose()
    return out


async def bench_steps(root: Path, steps: int) -> dict[str, dict[str, float]]:
    """Per-step cost of a replayed LinuxAgent session whose steps each read a file."""
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    answers = []
    for i in range(steps):
        (workspace / f"f{i}.txt").write_text(f"line {i}\n")
        answers.append(
            {
                "observation": "x",
                "thought": "read the next file",
                "action": {"function": "read_file", "arguments": {"path": f"f{i}.txt"}, "status": "CONTINUE"},
                "result": "",
            }
        )
    answers.append(
        {
            "observation": "x",
            "thought": "done",
            "action": {"function": "", "arguments": {}, "status": "FINISH"},
            "result": "ok",
        }
    )
    replay = root / "answers.jsonl"
    replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    options = RunOptions(
        request="read every file",
        workspace=workspace,
        provider="replay",
        replay_file=replay,
        max_steps=steps + 5,
        log_dir=root / "logs",
        task="bench",
        quiet=True,
    )
    start = time.perf_counter()
    result = await run_linux_task(options, view=ConsoleView(quiet=True))
    wall = time.perf_counter() - start
    if result["status"] != "FINISH":
        raise SystemExit(f"benchmark session did not finish: {result}")
    records = [
        json.loads(line) for line in (root / "logs" / "bench" / "response.log").read_text().splitlines()
    ]
    per_step = [float(r["total_time"]) for r in records]
    return {
        "agent step (processor + middleware + dispatcher + MCP)": summarise(per_step),
        "whole session / step (incl. set-up)": {
            "median_ms": wall / len(records) * 1000,
            "p95_ms": 0.0,
            "mean_ms": 0.0,
            "n": 1.0,
        },
    }


async def main(steps: int, calls: int) -> dict[str, dict[str, float]]:
    """Run every benchmark and return the figures."""
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sandbox in ("none", "auto"):
            ws = root / f"mcp-{sandbox}"
            ws.mkdir()
            results.update(await bench_mcp(ws, sandbox, calls))
        results.update(await bench_steps(root / "steps", steps))
    return results


def render(results: dict[str, dict[str, float]]) -> None:
    """Print a table."""
    table = Table(title="starweave benchmarks (lower is better)")
    for column in ("measure", "median ms", "p95 ms", "mean ms", "n"):
        table.add_column(column)
    for name, figures in results.items():
        table.add_row(
            name,
            f"{figures['median_ms']:.3f}",
            f"{figures['p95_ms']:.3f}" if figures["p95_ms"] else "-",
            f"{figures['mean_ms']:.3f}" if figures["mean_ms"] else "-",
            str(int(figures["n"])),
        )
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=200, help="agent steps to replay")
    parser.add_argument("--calls", type=int, default=1000, help="MCP calls per measure")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    figures = asyncio.run(main(args.steps, args.calls))
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
    else:
        render(figures)
