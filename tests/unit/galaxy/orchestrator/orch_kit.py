"""Test kit for the orchestrator: an in-memory DeviceExecutor and event recorders."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starweave.galaxy.constellation import DependencyType, TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.devices.profile import AgentProfile, DeviceStatus
from starweave.galaxy.events import Event, EventType
from starweave.galaxy.types import ExecutionResult


@dataclass
class Call:
    """One device call as the fake saw it."""

    task_id: str
    device_id: str
    request: str
    started: float
    ended: float | None = None
    cancelled: bool = False


@dataclass
class FakeDevices:
    """A DeviceExecutor with per-task delays, gates, failures and errors; tracks concurrency.

    A task with a gate runs until the test sets it (after its delay, if it has one as well).

    Unlike the real device manager it does not serialise per device: tests use one device per
    parallel task when they check concurrency.
    """

    devices: dict[str, str] = field(default_factory=lambda: {"A": "linux", "B": "linux", "C": "windows"})
    delays: dict[str, float] = field(default_factory=dict)
    gates: dict[str, asyncio.Event] = field(default_factory=dict)
    failures: set[str] = field(default_factory=set)
    raises: set[str] = field(default_factory=set)
    results: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    running: int = 0
    max_running: int = 0

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
        call = Call(task_id, device_id, task_description, time.monotonic())
        self.calls.append(call)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if task_id in self.raises:
                raise RuntimeError(f"device exploded on {task_id}")
            await asyncio.sleep(self.delays.get(task_id, 0.0))
            if task_id in self.gates:
                await self.gates[task_id].wait()
        except asyncio.CancelledError:
            call.cancelled = True
            raise
        finally:
            self.running -= 1
            call.ended = time.monotonic()
        if task_id in self.failures:
            return ExecutionResult(
                task_id, "failed", error=f"{task_id} failed on purpose", device_id=device_id
            )
        answer = self.results.get(task_id, f"result of {task_id}")
        return ExecutionResult(task_id, "completed", result=answer, device_id=device_id)

    def get_connected_devices(self) -> list[str]:
        return list(self.devices)

    def get_device_info(self, device_id: str) -> AgentProfile | None:
        os_name = self.devices.get(device_id)
        if os_name is None:
            return None
        return AgentProfile(device_id, "ws://fake", os=os_name, status=DeviceStatus.IDLE)

    def order(self) -> list[str]:
        return [c.task_id for c in self.calls]

    def call(self, task_id: str) -> Call:
        return next(c for c in self.calls if c.task_id == task_id)


async def eventually(predicate: Callable[[], bool], limit: float = 30.0) -> None:
    """Wait (bounded) until ``predicate()`` holds; tests observe state changed by other tasks.

    The limit is generous (a loaded machine is slow): only a failing test waits that long.
    """
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


class Recorder:
    """Records every event it receives."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def on_event(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: EventType) -> list[Event]:
        return [e for e in self.events if e.event_type is kind]


def make_constellation(
    tasks: list[str],
    edges: list[tuple[str, str]] = (),  # type: ignore[assignment]
    device: str | None = "A",
    dependency_type: DependencyType = DependencyType.UNCONDITIONAL,
    cid: str = "c1",
) -> TaskConstellation:
    """Tasks named by id (each on ``device``) and lines between them."""
    c = TaskConstellation(constellation_id=cid)
    for task_id in tasks:
        c.add_task(
            TaskStar(task_id=task_id, name=task_id, description=f"do {task_id}", target_device_id=device)
        )
    for source, target in edges:
        c.add_dependency(TaskStarLine(source, target, dependency_type=dependency_type))
    return c


def copy_of(c: TaskConstellation) -> TaskConstellation:
    """An independent copy, as the agent's editor would hold."""
    return TaskConstellation.from_dict(c.to_dict())
