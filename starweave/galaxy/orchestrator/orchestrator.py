"""TaskConstellationOrchestrator: runs a TaskConstellation's tasks on devices as soon as their
dependencies allow (spec B §6.1–§6.2, E §8.1–§8.2).

Scheduling is event-driven and incremental: every task runs in its own asyncio task; when one
ends it records its outcome in the current constellation (whose ``mark_task_completed`` updates
readiness incrementally), publishes its event and wakes the loop. The loop then waits for the
agent's pending edits (synchronizer), adopts the merged constellation, and starts the tasks that
became ready. Starting a task marks it RUNNING at once, so the ready set only ever holds tasks not
yet started and a scheduling pass costs O(newly ready tasks), never O(constellation).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from starweave.errors import OrchestrationError
from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStatus
from starweave.galaxy.events import EventBus, get_event_bus
from starweave.galaxy.types import ExecutionResult

from .assignment import ConstellationManager
from .executor import DeviceExecutor, StartedCallback
from .publishing import OrchestratorEvents
from .requests import absent_claims, build_task_request, result_payload
from .synchronizer import ConstellationModificationSynchronizer

log = logging.getLogger("starweave.galaxy.orchestrator")

CANCEL_GRACE = 5.0
"""Seconds to wait for cancelled device calls to unwind before giving up on them."""


def _by_priority(task: TaskStar) -> int:
    return -task.priority.value


@dataclass
class _Run:
    """One orchestration of one constellation."""

    constellation: TaskConstellation
    strategy: str | None
    started: float
    running: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)
    results: dict[str, ExecutionResult] = field(default_factory=dict)
    candidates: list[TaskStar] = field(default_factory=list)  # newly ready since the last pass
    rescan: bool = True  # ask the constellation for its whole ready set on the next pass
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    cancel_requested: asyncio.Event = field(default_factory=asyncio.Event)


class TaskConstellationOrchestrator:
    """Executes constellations on a DeviceExecutor and publishes task/constellation events."""

    def __init__(
        self,
        device_manager: DeviceExecutor | None = None,
        event_bus: EventBus | None = None,
        task_timeout: float | None = None,
        assignment_strategy: str | None = None,
    ) -> None:
        self.device_manager = device_manager
        # The strategy of a run that names none (constellation.yaml's ASSIGNMENT_STRATEGY).
        self.assignment_strategy = assignment_strategy
        self.event_bus = event_bus if event_bus is not None else get_event_bus()
        self.task_timeout = task_timeout
        self._constellation_manager = ConstellationManager(device_manager)
        self._modification_synchronizer: ConstellationModificationSynchronizer | None = None
        self._events = OrchestratorEvents(self.event_bus, f"orchestrator_{id(self)}")
        self._runs: dict[str, _Run] = {}
        self._current: TaskConstellation | None = None

    # ----------------------------------------------------------------- wiring
    def set_modification_synchronizer(self, sync: ConstellationModificationSynchronizer | None) -> None:
        """Gate scheduling on ``sync`` (it must also be subscribed to the event bus)."""
        self._modification_synchronizer = sync

    @property
    def constellation_manager(self) -> ConstellationManager:
        """Assignment strategies and the registry of running constellations."""
        return self._constellation_manager

    @property
    def current_constellation(self) -> TaskConstellation | None:
        """The live constellation of the latest run (the merged copy after an agent edit)."""
        return self._current

    def notify_constellation_changed(self) -> None:
        """Wake every scheduling loop (an edit was published)."""
        for run in self._runs.values():
            run.rescan = True  # an in-place edit may have made tasks ready without a completion
            run.wake.set()

    # ----------------------------------------------------------------- public API
    async def orchestrate_constellation(
        self,
        constellation: TaskConstellation,
        device_assignments: dict[str, str] | None = None,
        assignment_strategy: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run every task to a terminal state; returns ``{results, errors, status, total_tasks, statistics}``.

        Without ``assignment_strategy`` the orchestrator's own (from its constructor) is used.
        OrchestrationError before anything runs for an invalid DAG or missing/unknown device assignments.
        Returns with status "cancelled" after ``cancel_execution``; re-raises CancelledError when
        the calling task itself is cancelled (running device calls are cancelled first).
        """
        prepare_start = time.time()
        if assignment_strategy is None:
            assignment_strategy = self.assignment_strategy
        cid = constellation.constellation_id
        if cid in self._runs:
            raise OrchestrationError(
                f"Constellation {cid} is already being orchestrated; wait for it or cancel it"
            )
        await self._validate_and_prepare(constellation, device_assignments, assignment_strategy)
        run = _Run(constellation, assignment_strategy, time.time())
        self._runs[cid] = run
        self._current = constellation
        self._constellation_manager.register_constellation(constellation, metadata)
        try:
            constellation.start_execution()
            await self._events.constellation_started(constellation, assignment_strategy, prepare_start)
            await self._run_execution_loop(run)
            await self._stop_running(run)
            return await self._finalize(run)
        except asyncio.CancelledError:
            log.info("Orchestration cancelled for constellation %s", cid)
            await self._stop_running(run)
            raise
        except Exception as exc:
            log.exception("Orchestration of constellation %s failed", cid)
            await self._stop_running(run)
            run.constellation.complete_execution()
            await self._events.constellation_failed(run.constellation, exc)
            raise
        finally:
            self._runs.pop(cid, None)
            self._constellation_manager.unregister_constellation(cid)

    async def cancel_execution(self, constellation_id: str) -> bool:
        """Cancel a run: its device calls are cancelled and its unfinished tasks marked CANCELLED.
        False when no such run is active."""
        run = self._runs.get(constellation_id)
        if run is None:
            return False
        run.cancel_requested.set()
        for task in run.running.values():
            task.cancel()
        run.wake.set()
        return True

    async def get_constellation_status(self, constellation: TaskConstellation) -> dict[str, Any] | None:
        """Status of a running constellation (None when it is not being orchestrated)."""
        return await self._constellation_manager.get_constellation_status(constellation.constellation_id)

    # ----------------------------------------------------------------- preparation
    async def _validate_and_prepare(
        self,
        constellation: TaskConstellation,
        device_assignments: dict[str, str] | None,
        strategy: str | None,
    ) -> None:
        ok, errors = constellation.validate_dag()
        if not ok:
            raise OrchestrationError(f"Invalid DAG: {errors}")
        if constellation.is_complete():
            return  # nothing will run: no device needed
        if self.device_manager is None:
            raise OrchestrationError(
                "Device manager not available: construct TaskConstellationOrchestrator with a device manager"
            )
        for task_id, device_id in (device_assignments or {}).items():
            if not self._constellation_manager.reassign_task_device(constellation, task_id, device_id):
                raise OrchestrationError(f"device_assignments names unknown task '{task_id}'")
        if strategy is not None:
            # The caller's explicit assignments are preferences that win over the plan's requirements.
            await self._constellation_manager.assign_devices_automatically(
                constellation, strategy, device_assignments
            )
        assert self.device_manager is not None
        errors = assignment_errors(self._constellation_manager, self.device_manager, constellation)
        if errors:
            known = [d["device_id"] for d in self._constellation_manager.available_devices()]
            raise OrchestrationError(
                f"Device assignment validation failed: {errors}; connected devices: {known}. "
                "Set target_device_id on every task, or provide either 'device_assignments' or "
                "'assignment_strategy'"
            )

    # ----------------------------------------------------------------- the loop
    async def _run_execution_loop(self, run: _Run) -> None:
        rescanned = False
        while not run.cancel_requested.is_set():
            await self._sync_constellation_modifications(run)
            if run.cancel_requested.is_set():
                break
            self._reap_finished(run)
            self._schedule_ready_tasks(run)
            if not run.running:
                if run.constellation.is_complete():
                    return
                if not rescanned:
                    run.rescan = rescanned = True  # look at the whole ready set once before giving up
                    continue
                await self._resolve_stall(run)
                continue
            rescanned = False
            run.wake.clear()
            if run.finished:
                continue  # something ended while we were scheduling
            await run.wake.wait()

    async def _sync_constellation_modifications(self, run: _Run) -> None:
        sync = self._modification_synchronizer
        if sync is None:
            return
        if sync.has_pending_modifications():
            await self._wait_unless_cancelled(run, sync.wait_for_pending_modifications())
        if run.cancel_requested.is_set():
            return
        merged = sync.merge_and_sync_constellation_states(run.constellation)
        if merged is not run.constellation:
            await self._adopt(run, merged)

    @staticmethod
    async def _wait_unless_cancelled(run: _Run, waiting: Any) -> None:
        wait_task = asyncio.ensure_future(waiting)
        cancel_task = asyncio.ensure_future(run.cancel_requested.wait())
        try:
            await asyncio.wait({wait_task, cancel_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (wait_task, cancel_task):
                if not pending.done():
                    pending.cancel()

    async def _adopt(self, run: _Run, merged: TaskConstellation) -> None:
        """Continue with the agent's edited (and merged) constellation."""
        if merged.execution_start_time is None:
            merged.start_execution()
        if run.strategy is not None and any(not t.target_device_id for t in merged.get_modifiable_tasks()):
            await self._constellation_manager.assign_devices_automatically(merged, run.strategy)
        run.constellation = merged
        run.rescan = True
        self._current = merged
        self._constellation_manager.replace_constellation(merged)
        log.info(
            "Continuing constellation %s with the agent's edits (%d tasks)",
            merged.constellation_id,
            merged.task_count,
        )

    def _reap_finished(self, run: _Run) -> None:
        for task_id in run.finished:
            run.running.pop(task_id, None)
        run.finished.clear()

    def _schedule_ready_tasks(self, run: _Run) -> None:
        c = run.constellation
        # Only tasks that became ready since the last pass are looked at (mark_task_completed
        # reports them), so a pass costs O(newly ready), whatever the size of the constellation.
        if run.rescan:
            run.rescan = False
            run.candidates.clear()
            candidates = c.get_ready_tasks()
        else:
            candidates, run.candidates = run.candidates, []
            if len(candidates) > 1:
                candidates.sort(key=_by_priority)
        for task in candidates:
            task_id = task.task_id
            if task_id in run.running or not task.is_ready_to_execute or c.get_task(task_id) is not task:
                continue
            device_id = task.target_device_id
            request = build_task_request(task, c)
            c.start_task(task_id)  # leaves the ready set now: the next pass will not see it again
            run.running[task_id] = asyncio.create_task(
                self._execute_task_with_events(
                    run, task_id, device_id, request, task.task_data, task.timeout
                ),
                name=f"galaxy-task-{task_id}",
            )

    async def _resolve_stall(self, run: _Run) -> None:
        """Nothing runs, nothing is ready, yet tasks remain: fail what can never finish."""
        c = run.constellation
        stuck = [t for t in c.get_all_tasks() if not t.is_terminal]
        log.warning("Constellation %s stalled with %d unfinished tasks", c.constellation_id, len(stuck))
        orphans = [t for t in stuck if t.status is TaskStatus.RUNNING]
        for task in orphans:  # RUNNING in the agent's copy but never started by this run
            error = "Task was marked running but no device is executing it; re-add it to run it again"
            await self._record(
                run, ExecutionResult(task.task_id, "failed", error=error, device_id=task.target_device_id)
            )
        if not orphans:
            for task in stuck:
                if not task.is_terminal:
                    c.cancel_task(task.task_id)

    # ----------------------------------------------------------------- one task
    async def _execute_task_with_events(
        self,
        run: _Run,
        task_id: str,
        device_id: str | None,
        request: str,
        task_data: dict[str, Any],
        task_timeout: float | None,
    ) -> None:
        started = False

        async def on_started() -> None:
            # The device's real start (after its queue): the start time and TASK_STARTED follow it.
            nonlocal started
            started = True
            task = run.constellation.get_task(task_id)
            if task is not None and task.status is TaskStatus.RUNNING:
                task.mark_started()
            await self._events.task_started(run.constellation, task_id, device_id)

        try:
            start = time.time()
            if not device_id:
                await on_started()
                result = ExecutionResult(
                    task_id,
                    "failed",
                    start_time=start,
                    end_time=start,
                    error=f"Task '{task_id}' has no device assignment; set target_device_id",
                )
            else:
                assert self.device_manager is not None
                result = await call_device(
                    self.device_manager,
                    task_id,
                    device_id,
                    request,
                    task_data,
                    task_timeout or self.task_timeout,
                    on_started,
                )
                if not started:  # refused before the device took it: still a started-and-ended pair
                    await self._events.task_started(run.constellation, task_id, device_id)
            await self._record(run, result)
        finally:
            run.finished.append(task_id)
            run.wake.set()

    async def _record(self, run: _Run, result: ExecutionResult) -> None:
        """Store the outcome in the *current* constellation (it may be a merged copy) and publish."""
        task_id = result.task_id
        run.results[task_id] = result
        c = run.constellation
        task = c.get_task(task_id)
        if task is None or task.status is not TaskStatus.RUNNING:
            log.warning(
                "Result of task %s not recorded: task is %s in constellation %s",
                task_id,
                "gone" if task is None else task.status.value,
                c.constellation_id,
            )
            return
        claims = absent_claims(task, result) if result.status == "completed" else []
        if claims:
            # Checked against the world before any dependant starts: the device says it made a
            # file the task asked for, and its workspace never held it.
            result.status = "failed"
            result.error = (
                f"the device's answer names {', '.join(claims)}, which the task asks for, but its "
                "workspace never held it"
            )
        success = result.status == "completed"
        newly = c.mark_task_completed(
            task_id,
            success=success,
            result=result,
            error=None if success else (result.error or f"Task {result.status}"),
        )
        run.candidates.extend(newly)
        await self._events.task_ended(c, result, [t.task_id for t in newly], success)

    # ----------------------------------------------------------------- ending
    async def _stop_running(self, run: _Run) -> None:
        """Cancel outstanding device calls and mark every unfinished task CANCELLED."""
        pending = [t for t in run.running.values() if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            _, stuck = await asyncio.wait(pending, timeout=CANCEL_GRACE)
            if stuck:
                log.warning("%d device calls did not unwind within %ss", len(stuck), CANCEL_GRACE)
        run.running.clear()
        sync = self._modification_synchronizer
        if run.cancel_requested.is_set() and sync is not None:
            sync.clear_pending_modifications()  # a cancelled run's edits must not hold up the next one
        c = run.constellation
        if not c.is_complete():
            for star in c.get_all_tasks():
                if not star.is_terminal:
                    c.cancel_task(star.task_id)

    async def _finalize(self, run: _Run) -> dict[str, Any]:
        c = run.constellation
        c.complete_execution()
        cancelled = run.cancel_requested.is_set()
        all_done = all(t.status is TaskStatus.COMPLETED for t in c.get_all_tasks())
        status = "cancelled" if cancelled else ("completed" if all_done else "failed")
        statistics = c.get_statistics()
        await self._events.constellation_completed(c, statistics, run.started, status)
        return {
            "constellation_id": c.constellation_id,
            "results": {tid: result_payload(r) for tid, r in run.results.items() if r.status == "completed"},
            "errors": {tid: r.error or r.status for tid, r in run.results.items() if r.status != "completed"},
            "status": status,
            "total_tasks": c.task_count,
            "statistics": statistics,
        }


def assignment_errors(
    manager: ConstellationManager, devices: DeviceExecutor, constellation: TaskConstellation
) -> list[str]:
    """Tasks without a device, and unfinished tasks assigned to a device nobody registered."""
    _, errors = manager.validate_constellation_assignments(constellation)
    for task in constellation.get_all_tasks():
        device_id = task.target_device_id
        if not task.is_terminal and device_id and devices.get_device_info(device_id) is None:
            errors.append(f"Task '{task.task_id}' is assigned to unknown device '{device_id}'")
    return errors


async def call_device(
    devices: DeviceExecutor,
    task_id: str,
    device_id: str,
    request: str,
    task_data: dict[str, Any],
    task_timeout: float | None,
    on_started: StartedCallback,
) -> ExecutionResult:
    """The device call; an executor that raises despite its contract makes only this task fail."""
    start = time.time()
    try:
        return await devices.assign_task_to_device(
            task_id, device_id, request, task_data, task_timeout, on_started=on_started
        )
    except (OSError, RuntimeError, ValueError, LookupError, TypeError) as exc:
        # The executor broke its "never raise" contract; the task fails, the run goes on.
        return ExecutionResult(
            task_id,
            "failed",
            error=f"{type(exc).__name__}: {exc}",
            device_id=device_id,
            start_time=start,
            end_time=time.time(),
        )
