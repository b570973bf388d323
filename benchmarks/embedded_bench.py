"""The embedded model's benchmark: raw speed, step latency with and without the prefix cache, and
the success rate and wall time of real tasks run through the CLI as a user runs them.

Run: ``make bench`` (every part), or ``.venv/bin/python benchmarks/embedded_bench.py [--parts
speed,linux,galaxy,desktop,mobile] [--only NAME ...] [--threads] [--json FILE]``.

1. ``speed``: prompt and generation tokens per second at the default thread counts; a step's
   latency (a 700-token system prompt, a short request, a short JSON answer) cold, with the system
   prompt's KV state restored from disk (a new process), and as the next step of a conversation
   whose slot is warm.
2. ``linux``: the single-device tasks of ``embedded_tasks_linux.py`` (``starweave run``).
3. ``galaxy``: the two-device requests of ``embedded_tasks_galaxy.py`` (``starweave galaxy --local 2``).
4. ``desktop``: the calculator and mousepad tasks of ``embedded_tasks_desktop.py`` (``--agent host``
   under Xvfb).
5. ``mobile``: the notes tasks of ``embedded_tasks_mobile.py`` (``--agent mobile`` on the simulated
   phone).

``--threads`` adds the thread matrix behind the defaults (prompt/generation threads × polling ×
0, 1 or 2 busy cores); it takes about 15 minutes. Nothing here is asserted: the figures go to the
issue notes and the README.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_common import Outcome
from rich.console import Console
from rich.table import Table

from starweave.llm.providers.local import LocalClient
from starweave.llm.providers.local_slots import system_text

console = Console(width=120)
RULES = " ".join(f"Rule {i}: use relative paths, check outputs, and keep answers short." for i in range(45))
SCHEMA = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 120},
        "command": {"type": "string", "maxLength": 80},
        "status": {"type": "string", "enum": ["CONTINUE", "FINISH"]},
    },
    "required": ["thought", "command", "status"],
    "additionalProperties": False,
}
REQUEST = "Count the lines of every .txt file in this folder and report the total."
GEN_TOKENS = 150


def _messages(system: str, *turns: str) -> list[dict[str, str]]:
    roles = ["user", "assistant"]
    return [{"role": "system", "content": system}] + [
        {"role": roles[i % 2], "content": turn} for i, turn in enumerate(turns)
    ]


async def _call(client: LocalClient, messages: list[dict[str, str]]) -> dict[str, float]:
    records: list[dict[str, Any]] = []
    client.on_call = records.append
    started = time.monotonic()
    completion = await client.complete(messages, SCHEMA, max_tokens=GEN_TOKENS)
    timings = dict(records[-1].get("timings") or {})
    timings["wall_s"] = time.monotonic() - started
    timings["text"] = completion.text  # type: ignore[assignment]
    return timings


async def speed() -> dict[str, Any]:
    """Tokens per second and step latency cold, restored from disk, and warm."""
    system = f"You are a shell agent ({uuid.uuid4().hex[:8]}). {RULES}"
    cold_client = LocalClient(kv_store=False)
    await cold_client.load()
    try:
        cold = await _call(cold_client, _messages(system, REQUEST))
        warm = await _call(
            cold_client,
            _messages(system, REQUEST, str(cold.pop("text")), "Result: exit 0, 3 files, 42 lines."),
        )
        warm.pop("text")
        threads = (cold_client.n_batch_threads, cold_client.n_threads)
        grammar_ms = await _grammar_cost(cold_client, system)
    finally:
        await cold_client.aclose()
    stored_client = LocalClient(kv_store=True)
    await stored_client.load()
    try:
        first = await _call(stored_client, _messages(system, REQUEST))  # primes and stores the prefix
        first.pop("text")
    finally:
        await stored_client.aclose()
    restored_client = LocalClient(kv_store=True)
    await restored_client.load()
    try:
        restored = await _call(restored_client, _messages(system, REQUEST))
        restored.pop("text")
        store = restored_client._store
        if store is not None:  # leave no benchmark prompt behind
            (store.folder / store.name_for(system_text(_messages(system)))).unlink(missing_ok=True)
    finally:
        await restored_client.aclose()
    return {
        "threads": {"prompt": threads[0], "generation": threads[1]},
        "ms_per_token": grammar_ms,
        "prompt_tok_s": 1000 * cold["prompt_n"] / max(cold["prompt_ms"], 1e-9),
        "generation_tok_s": 1000 * cold["predicted_n"] / max(cold["predicted_ms"], 1e-9),
        "steps": {"cold": cold, "system prompt from disk": restored, "next step, warm slot": warm},
    }


async def _grammar_cost(client: LocalClient, system: str) -> dict[str, float]:
    """Generation milliseconds per token with and without the JSON grammar (the same prompt)."""
    costs: dict[str, float] = {}
    for label, schema in (("free text", None), ("JSON grammar", SCHEMA)):
        records: list[dict[str, Any]] = []
        client.on_call = records.append
        try:
            await client.complete(_messages(system, REQUEST + " Explain your plan."), schema, max_tokens=80)
        finally:
            client.on_call = None
        timings = records[-1].get("timings") or {}
        costs[label] = timings.get("predicted_ms", 0.0) / max(timings.get("predicted_n", 1.0), 1.0)
    return costs


def print_speed(result: dict[str, Any]) -> None:
    """The speed part as two small tables."""
    threads = result["threads"]
    console.print(
        f"[bold]Embedded model[/bold]: {threads['prompt']} prompt thread(s), {threads['generation']} "
        f"generation thread(s): prompt {result['prompt_tok_s']:.1f} tok/s, generation "
        f"{result['generation_tok_s']:.1f} tok/s"
    )
    per_token = ", ".join(f"{k} {v:.0f} ms" for k, v in result["ms_per_token"].items())
    console.print(f"Generation per token: {per_token}")
    table = Table(title="One agent step (700-token system prompt, a short JSON answer)")
    for column in ("case", "wall s", "cached tokens", "new prompt tokens", "prompt s", "generated", "gen s"):
        table.add_column(column, justify="right" if column != "case" else "left")
    for case, step in result["steps"].items():
        table.add_row(
            case,
            f"{step['wall_s']:.2f}",
            f"{step.get('cache_n', 0):.0f}",
            f"{step.get('prompt_n', 0):.0f}",
            f"{step.get('prompt_ms', 0) / 1000:.2f}",
            f"{step.get('predicted_n', 0):.0f}",
            f"{step.get('predicted_ms', 0) / 1000:.2f}",
        )
    console.print(table)


THREAD_CONFIGS = [(1, 1, 50), (2, 2, 50), (2, 2, 0), (2, 1, 0)]


async def thread_matrix() -> list[dict[str, Any]]:
    """Seconds per call for prompt/generation threads × polling × busy cores (0, 1, 2)."""
    rows: list[dict[str, Any]] = []
    for batch, gen, poll in THREAD_CONFIGS:
        client = LocalClient(n_threads=gen, n_batch_threads=batch, kv_store=False, n_slots=1, poll=poll)
        await client.load()
        try:
            for busy in (0, 1, 2):
                hogs = [
                    await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
                    for _ in range(busy)
                ]
                try:
                    system = f"Agent {uuid.uuid4().hex}. {RULES}"
                    step = await _call(client, _messages(system, REQUEST))
                finally:
                    for hog in hogs:
                        hog.kill()
                        await hog.wait()
                rows.append(
                    {
                        "prompt_threads": batch,
                        "gen_threads": gen,
                        "poll": poll,
                        "busy_cores": busy,
                        "wall_s": step["wall_s"],
                        "prompt_ms": step.get("prompt_ms", 0),
                        "predicted_ms": step.get("predicted_ms", 0),
                    }
                )
                console.print(rows[-1])
        finally:
            await client.aclose()
    return rows


def summarise(part: str, outcomes: list[Outcome]) -> dict[str, Any]:
    """Success rate and wall times of one suite; prints a table of its tasks."""
    table = Table(title=f"{part}: {sum(o.ok for o in outcomes)}/{len(outcomes)} succeeded")
    for column in ("task", "ok", "wall s", "reason"):
        table.add_column(column)
    for outcome in outcomes:
        table.add_row(
            outcome.name, "yes" if outcome.ok else "NO", f"{outcome.seconds:.1f}", outcome.reason[:80]
        )
    console.print(table)
    times = [o.seconds for o in outcomes]
    return {
        "tasks": len(outcomes),
        "succeeded": sum(o.ok for o in outcomes),
        "success_rate": sum(o.ok for o in outcomes) / len(outcomes) if outcomes else 0.0,
        "median_s": statistics.median(times) if times else 0.0,
        "max_s": max(times) if times else 0.0,
        "outcomes": [o.__dict__ for o in outcomes],
    }


def suite_runner(part: str) -> Callable[..., list[Outcome]]:
    """The ``run_<part>_suite`` function of ``embedded_tasks_<part>.py``."""
    module = __import__(f"embedded_tasks_{part}")
    return getattr(module, f"run_{part}_suite")  # type: ignore[no-any-return]


def main() -> None:
    """Run the chosen parts and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="speed,linux,galaxy,desktop,mobile")
    parser.add_argument("--only", nargs="*", default=None, help="run only these task names")
    parser.add_argument("--threads", action="store_true", help="also measure the thread matrix")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per task")
    parser.add_argument("--json", type=Path, default=None, help="save the figures as JSON here")
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    figures: dict[str, Any] = {}
    if "speed" in parts:
        figures["speed"] = asyncio.run(speed())
        print_speed(figures["speed"])
    if args.threads:
        figures["threads"] = asyncio.run(thread_matrix())
    for part in ("linux", "galaxy", "desktop", "mobile"):
        if part not in parts:
            continue
        run = suite_runner(part)
        outcomes = run(timeout=args.timeout, names=args.only, report=lambda o: console.print(f"  {o}"))
        figures[part] = summarise(part, outcomes)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
        console.print(f"figures saved to {args.json}")


if __name__ == "__main__":
    main()
