"""Galaxy WebUI costs: one page's event latency, and what 20 open pages cost an orchestration.

Run: ``.venv/bin/python benchmarks/webui_bench.py [--events 200] [--tasks 200] [--pages 20]``

(a) Latency: an event published on the bus until a page (a real WebSocket client, in this process)
    receives it, events spaced like a real run's; median and p95. (Under a burst, frames to one
    page are COALESCE_SECONDS apart, which bounds the added delay.)
(b) Overhead: a 200-task chain on instant fake devices (orchestrator_bench.InstantDevices), timed
    with no WebUI, with the WebUI and no page, and with the WebUI and 20 pages, in turns. The pages
    run in a child process (as browsers would), reading everything. Task events carry a summary of
    the constellation and the constellation events its lean page form; each event is encoded once,
    and the pages' share is one queue append per page per event plus a few frames per page.
Acceptance: per-task time with 20 pages <= 2x the time with none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import uvicorn
import websockets
from orchestrator_bench import Counter, InstantDevices, build

from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.galaxy.events import Event, EventBus, EventType
from starweave.galaxy.orchestrator import TaskConstellationOrchestrator
from starweave.galaxy.webui import WebUIService, create_app
from starweave.galaxy.webui.broadcast import COALESCE_SECONDS
from starweave.server.app import serve_in_task

PAGES_SCRIPT = """
import asyncio, sys, websockets
async def page(url, ready):
    async with websockets.connect(url, max_size=None) as ws:
        await ws.recv()  # the opening messages (welcome, device and state snapshots)
        ready.append(1)
        if len(ready) == int(sys.argv[2]):
            print("ready", flush=True)
        async for _ in ws:
            pass
async def main():
    ready = []
    await asyncio.gather(*(page(sys.argv[1], ready) for _ in range(int(sys.argv[2]))))
asyncio.run(main())
"""


def make_service(folder: Path) -> WebUIService:
    """A WebUI service whose client is never started (the benchmark drives the bus itself)."""
    folder.mkdir(parents=True, exist_ok=True)
    replay = folder / "planner.jsonl"
    replay.write_text('{"thought": "unused", "status": "FINISH"}\n')
    options = GalaxyOptions(provider="replay", replay_file=replay, log_dir=folder / "logs")
    return WebUIService(GalaxyClient(options))


async def serve(service: WebUIService) -> tuple[uvicorn.Server, asyncio.Task[None], str]:
    config = uvicorn.Config(
        create_app(service),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
        ws_per_message_deflate=False,
    )
    server = uvicorn.Server(config)
    task, port = await serve_in_task(server)
    return server, task, f"ws://127.0.0.1:{port}/ws"


async def latency(folder: Path, events: int) -> list[float]:
    """Milliseconds from publish to receive, per event."""
    service = make_service(folder)
    server, task, url = await serve(service)
    samples: list[float] = []
    try:
        async with websockets.connect(url) as page:
            await page.recv()  # welcome, device and state snapshots: one frame
            for i in range(events):
                # Spaced like a real run's events: a page gets a burst in frames COALESCE_SECONDS
                # apart, so back-to-back events would measure that window, not the path.
                await asyncio.sleep(COALESCE_SECONDS)
                start = time.perf_counter()
                await service.client.bus.publish_event(
                    Event(EventType.AGENT_ACTION, f"bench{i}", data={"i": i})
                )
                json.loads(await page.recv())
                samples.append((time.perf_counter() - start) * 1000)
    finally:
        server.should_exit = True
        await task
    return samples


async def drained(service: WebUIService) -> None:
    """Return once every page's queue is empty (the next run starts from quiet pages)."""
    for _ in range(1000):
        if not any(len(page) for page in service.broadcaster.pages):
            return
        await asyncio.sleep(0.01)


async def orchestrate(bus: EventBus, tasks: int) -> float:
    """Seconds for one chain orchestration on instant devices."""
    orchestrator = TaskConstellationOrchestrator(InstantDevices(4), event_bus=bus)
    constellation = build("chain", tasks, 4)
    start = time.perf_counter()
    outcome = await orchestrator.orchestrate_constellation(constellation)
    elapsed = time.perf_counter() - start
    if outcome["status"] != "completed":
        raise SystemExit(f"the run did not complete: {outcome['status']}")
    return elapsed


async def overhead(folder: Path, tasks: int, pages: int, runs: int) -> dict[str, float]:
    """Median ms per task: no WebUI, WebUI without pages, WebUI with ``pages`` pages.

    The three are run in turn, ``runs`` rounds of each, so that the machine's noise (a shared
    machine, runs of a few tens of milliseconds) falls on all of them alike.
    """
    plain = EventBus()
    plain.subscribe(Counter())
    quiet, busy = make_service(folder / "quiet"), make_service(folder / "busy")
    quiet_server, quiet_task, _ = await serve(quiet)
    busy_server, busy_task, url = await serve(busy)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PAGES_SCRIPT, url, str(pages), stdout=subprocess.PIPE
    )
    times: dict[str, list[float]] = {"no WebUI": [], "WebUI, 0 pages": [], f"WebUI, {pages} pages": []}
    try:
        assert child.stdout is not None
        await child.stdout.readline()  # every page connected and got its snapshot
        for _ in range(runs):
            times["no WebUI"].append(await orchestrate(plain, tasks))
            times["WebUI, 0 pages"].append(await orchestrate(quiet.client.bus, tasks))
            times[f"WebUI, {pages} pages"].append(await orchestrate(busy.client.bus, tasks))
            await drained(busy)
        out = {name: statistics.median(values) for name, values in times.items()}
        out["open pages"] = len(busy.broadcaster.pages)
        out["dropped"] = sum(page.dropped for page in busy.broadcaster.pages)
    finally:
        child.kill()
        await child.wait()
        for server, task in ((quiet_server, quiet_task), (busy_server, busy_task)):
            server.should_exit = True
            await task
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="webui-bench-") as tmp:
        samples = sorted(await latency(Path(tmp), args.events))
        p95 = samples[int(len(samples) * 0.95) - 1]
        print(
            f"(a) event latency bus -> page, {len(samples)} events: "
            f"median {statistics.median(samples):.3f} ms, p95 {p95:.3f} ms"
        )
        result = await overhead(Path(tmp), args.tasks, args.pages, args.runs)
    base = result["WebUI, 0 pages"]
    print(f"(b) {args.tasks}-task chain on instant devices, median of {args.runs} runs, ms per task:")
    for name in ("no WebUI", "WebUI, 0 pages", f"WebUI, {args.pages} pages"):
        print(f"    {name:<18}{result[name] * 1000 / args.tasks:>9.3f}")
    ratio = result[f"WebUI, {args.pages} pages"] / base
    verdict = "ok" if ratio <= 2 else "ABOVE the 2x target"
    print(
        f"    {args.pages} pages / 0 pages: {ratio:.2f}x ({verdict}); "
        f"pages open {int(result['open pages'])}, messages dropped {int(result['dropped'])}"
    )


if __name__ == "__main__":
    asyncio.run(main())
