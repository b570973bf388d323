"""Orchestration overhead per task with instant fake devices.

Run: ``.venv/bin/python benchmarks/orchestrator_bench.py [--max N] [--devices D]``

A fake DeviceExecutor answers every task at once (no I/O, no sleep), so the measured time is the
orchestrator's own cost: scheduling, request building, readiness updates, event publishing (one
subscribed observer that counts events) and the final statistics. Two DAG shapes: a chain
(t0 -> t1 -> ... , one ready task at a time) and a fan-out (one root, every other task depends on
it). The constellation is built before timing starts.

Reference (issue 5): 6.6 ms per task at 1,000 tasks and 33 ms per task at 5,000; target below
0.2 ms per task, flat as the DAG grows.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.devices.profile import AgentProfile, DeviceStatus
from starweave.galaxy.events import Event, EventBus
from starweave.galaxy.orchestrator import TaskConstellationOrchestrator
from starweave.galaxy.types import ExecutionResult

SIZES = (100, 1_000, 10_000, 100_000)
REFERENCE_MS = {1_000: 6.6, 5_000: 33.0}
TARGET_MS = 0.2


class InstantDevices:
    """A DeviceExecutor whose devices finish every task immediately."""

    def __init__(self, count: int) -> None:
        self.profiles = {
            f"dev{i}": AgentProfile(f"dev{i}", "ws://fake", os="linux", status=DeviceStatus.IDLE)
            for i in range(count)
        }

    async def assign_task_to_device(
        self,
        task_id: str,
        device_id: str,
        task_description: str,
        task_data: dict[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - DeviceExecutor protocol
        on_started: Callable[[], Awaitable[None]] | None = None,
    ) -> ExecutionResult:
        if on_started is not None:
            await on_started()
        now = time.time()
        return ExecutionResult(
            task_id, "completed", result="ok", device_id=device_id, start_time=now, end_time=now
        )

    def get_connected_devices(self) -> list[str]:
        return list(self.profiles)

    def get_device_info(self, device_id: str) -> AgentProfile | None:
        return self.profiles.get(device_id)


class Counter:
    """One observer, so publishing is exercised as in a session."""

    def __init__(self) -> None:
        self.count = 0

    async def on_event(self, event: Event) -> None:
        self.count += 1


def build(shape: str, n: int, devices: int) -> TaskConstellation:
    c = TaskConstellation()
    c.add_tasks(
        TaskStar(task_id=f"t{i}", description=f"step {i}", target_device_id=f"dev{i % devices}")
        for i in range(n)
    )
    if shape == "chain":
        lines = (TaskStarLine(f"t{i - 1}", f"t{i}", line_id=f"l{i}") for i in range(1, n))
    else:
        lines = (TaskStarLine("t0", f"t{i}", line_id=f"l{i}") for i in range(1, n))
    c.add_dependencies(lines)
    return c


async def measure(shape: str, n: int, devices: int) -> tuple[float, int]:
    """Seconds for one orchestration and the number of events published."""
    c = build(shape, n, devices)
    bus = EventBus()
    counter = Counter()
    bus.subscribe(counter)
    orchestrator = TaskConstellationOrchestrator(InstantDevices(devices), event_bus=bus)
    gc.collect()
    start = time.perf_counter()
    outcome = await orchestrator.orchestrate_constellation(c)
    elapsed = time.perf_counter() - start
    if outcome["status"] != "completed" or len(outcome["results"]) != n:
        raise SystemExit(f"{shape} {n}: run did not complete: {outcome['status']}")
    return elapsed, counter.count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=SIZES[-1], help="largest DAG size to run")
    parser.add_argument("--devices", type=int, default=4, help="number of fake devices")
    args = parser.parse_args()
    sizes = [n for n in SIZES if n <= args.max]
    print(f"{'shape':<8}{'tasks':>9}{'total s':>10}{'ms/task':>10}{'events':>9}   reference ms/task")
    for shape in ("chain", "fanout"):
        for n in sizes:
            elapsed, events = asyncio.run(measure(shape, n, args.devices))
            reference = REFERENCE_MS.get(n)
            ref = f"{reference:.1f}" if reference is not None else "-"
            per_task = elapsed * 1000 / n
            flag = "" if per_task < TARGET_MS else "  (above target)"
            print(f"{shape:<8}{n:>9,}{elapsed:>10.3f}{per_task:>10.4f}{events:>9}   {ref}{flag}")
    print(f"reference: 6.6 ms/task at 1,000 tasks, 33 ms/task at 5,000; target < {TARGET_MS} ms/task, flat")


if __name__ == "__main__":
    main()
