"""ConstellationManager: device assignment strategies and a registry of running constellations
(spec B §6.3, E §8.3).

Differences from the reference, on purpose: available devices come from ``get_device_info`` (the
reference called a method that does not exist and so never saw a device); a task's existing
``target_device_id`` counts as a preference; ``capability_match`` spreads tasks over the matching
devices by load instead of always taking the first match; tasks that already ran are never
reassigned (their device is frozen, invariant I1).

Nothing is overridden silently. A task's stated kind (``device_type``, aliases such as macos ->
darwin accepted) and ``required_capabilities`` narrow every strategy's choice. A caller's
``device_preferences`` entry wins over them (the user named the device; the plan's requirement is
the model's guess), with a warning. The task's own ``target_device_id`` (usually the model's
choice) is dropped, with a warning naming what the device lacks, when the device does not fit. When
no connected device fits, the task falls back to any device as the spec's ``capability_match``
does ("else first available"), with a warning naming the task and what it needs: the default log
level shows warnings on stderr, and the device agent's own failure then reaches the
ConstellationAgent, which can re-plan; refusing the whole plan would also stop the tasks that fit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from starweave.device_kinds import kind_key
from starweave.errors import OrchestrationError
from starweave.galaxy.constellation import TaskConstellation, TaskStar

from .executor import DeviceExecutor

log = logging.getLogger("starweave.galaxy.orchestrator")

AssignmentStrategy = Callable[[TaskStar, int, list[dict[str, Any]], dict[str, int]], str]
"""``strategy(task, index, devices, load)``: the device id for the ``index``-th task without a
usable preference; ``devices`` as :meth:`ConstellationManager.available_devices` lists them (in
order, never empty; only those of the task's stated kind and capabilities when any are), ``load``
the number of tasks each device id has so far."""


REQUIRED_CAPABILITIES = "required_capabilities"
"""``task_data`` key of the capabilities a task needs (a list, e.g. ``["gui", "mousepad"]``)."""


def required_capabilities(task: TaskStar) -> list[str]:
    """What the plan says the task needs: ``task_data.required_capabilities`` (lowercase)."""
    wanted = (task.task_data or {}).get(REQUIRED_CAPABILITIES) or []
    if isinstance(wanted, str):
        wanted = [wanted]
    return [str(c).strip().lower() for c in wanted if str(c).strip()]


def missing_requirements(
    device_type: str | None, required: Sequence[str], device: Mapping[str, Any]
) -> list[str]:
    """What ``device`` (``{device_type, capabilities}``) lacks of a task's kind and capabilities,
    e.g. ``["device kind 'mobile'", "capability 'gui'"]``; empty when it fits.

    The kind matches the device's own kind or one of its capabilities (a linux-desktop also has
    "linux"); aliases count as their kind on both sides (macos is darwin, android is mobile).
    """
    capabilities = {str(c).strip().lower() for c in device.get("capabilities") or []}
    missing = []
    if device_type:
        wanted = kind_key(device_type)
        own = kind_key(str(device.get("device_type") or ""))
        if wanted != own and wanted not in {kind_key(c) for c in capabilities}:
            missing.append(f"device kind {device_type.lower()!r}")
    missing += [f"capability {c!r}" for c in required if c not in capabilities]
    return missing


def task_missing(task: TaskStar, device: Mapping[str, Any]) -> list[str]:
    """:func:`missing_requirements` of ``task``'s ``device_type`` and required capabilities."""
    kind = task.device_type.value if task.device_type is not None else None
    return missing_requirements(kind, required_capabilities(task), device)


def _matches(task: TaskStar, device: Mapping[str, Any]) -> bool:
    return not task_missing(task, device)


def describe_devices(devices: Sequence[Mapping[str, Any]]) -> str:
    """``box (linux: shell, files), phone (mobile: touch)`` for messages."""
    parts = []
    for d in devices:
        capabilities = ", ".join(map(str, d.get("capabilities") or [])) or "none"
        parts.append(f"{d.get('device_id')} ({d.get('device_type')}: {capabilities})")
    return ", ".join(parts)


def _round_robin(task: TaskStar, index: int, devices: list[dict[str, Any]], load: dict[str, int]) -> str:
    return str(devices[index % len(devices)]["device_id"])


def _least_loaded(candidates: list[str], load: dict[str, int]) -> str:
    return min(candidates, key=lambda d: load[d])  # first on ties


def _load_balance(task: TaskStar, index: int, devices: list[dict[str, Any]], load: dict[str, int]) -> str:
    return _least_loaded([d["device_id"] for d in devices], load)


def _capability_match(task: TaskStar, index: int, devices: list[dict[str, Any]], load: dict[str, int]) -> str:
    matching = [d["device_id"] for d in devices if _matches(task, d)]
    return _least_loaded(matching or [d["device_id"] for d in devices], load)


STRATEGIES: dict[str, AssignmentStrategy] = {
    "round_robin": _round_robin,
    "capability_match": _capability_match,
    "load_balance": _load_balance,
}
"""The assignment strategies by name. Adding one is a function and an entry here; constellation.yaml
selects it with ``ASSIGNMENT_STRATEGY`` (its validator reads this table)."""


class ConstellationManager:
    """Assigns devices to tasks and keeps track of the constellations being orchestrated."""

    def __init__(self, device_manager: DeviceExecutor | None = None) -> None:
        self.device_manager = device_manager
        self._managed_constellations: dict[str, TaskConstellation] = {}
        self._constellation_metadata: dict[str, dict[str, Any]] = {}

    # ----------------------------------------------------------------- devices
    def available_devices(self) -> list[dict[str, Any]]:
        """``[{device_id, device_type, capabilities, status: "connected", metadata}]`` (connected only)."""
        if self.device_manager is None:
            return []
        devices = []
        for device_id in self.device_manager.get_connected_devices():
            profile = self.device_manager.get_device_info(device_id)
            devices.append(
                {
                    "device_id": device_id,
                    "device_type": profile.device_type if profile is not None else "unknown",
                    "capabilities": list(profile.capabilities) if profile is not None else [],
                    "status": "connected",
                    "metadata": dict(profile.metadata) if profile is not None else {},
                }
            )
        return devices

    # ----------------------------------------------------------------- assignment
    async def assign_devices_automatically(
        self,
        constellation: TaskConstellation,
        strategy: str = "round_robin",
        device_preferences: dict[str, str] | None = None,
    ) -> dict[str, str]:
        """Assign a device to every not-yet-run task; returns ``{task_id: device_id}``.

        A preference is kept when that device is connected: a ``device_preferences`` entry always
        (a warning when it lacks the task's stated kind or capabilities), the task's own
        ``target_device_id`` only when it fits; see the module docstring. OrchestrationError
        without a device manager, without devices, or for an unknown strategy.
        """
        if self.device_manager is None:
            raise OrchestrationError("Device manager not available for device assignment")
        if strategy not in STRATEGIES:
            raise OrchestrationError(
                f"Unknown assignment strategy: {strategy}; use one of {', '.join(STRATEGIES)}"
            )
        devices = self.available_devices()
        if not devices:
            raise OrchestrationError("No available devices for assignment; connect at least one device first")
        log.info("Assigning devices to constellation '%s' using strategy '%s'", constellation.name, strategy)
        assignments = self.plan_assignments(
            constellation.get_modifiable_tasks(), devices, strategy, device_preferences or {}
        )
        for task_id, device_id in assignments.items():
            task = constellation.get_task(task_id)
            if task is not None and task.target_device_id != device_id:
                task.target_device_id = device_id
        log.info("Assigned %d tasks to devices", len(assignments))
        return assignments

    @staticmethod
    def plan_assignments(
        tasks: list[TaskStar],
        devices: list[dict[str, Any]],
        strategy: str,
        preferences: dict[str, str],
    ) -> dict[str, str]:
        """Pure assignment plan for ``tasks`` (in order) over ``devices`` (in order)."""
        ids = [d["device_id"] for d in devices]
        load = dict.fromkeys(ids, 0)
        plan: dict[str, str] = {}
        free: list[TaskStar] = []
        by_id = {d["device_id"]: d for d in devices}
        for task in tasks:
            preferred = _usable_preference(task, preferences.get(task.task_id), by_id)
            if preferred is not None:
                plan[task.task_id] = preferred
                load[preferred] += 1
            else:
                free.append(task)
        choose = STRATEGIES[strategy]
        for index, task in enumerate(free):
            # Every strategy chooses among the devices that meet the task's stated requirement.
            pool = [d for d in devices if _matches(task, d)]
            if not pool:
                needs = task_missing(task, {})  # against no device: the whole requirement
                log.warning(
                    "Task '%s' needs %s, which no connected device has (%s); assigning it to "
                    "another device anyway, where it may fail",
                    task.task_id,
                    " and ".join(needs),
                    describe_devices(devices),
                )
                pool = devices
            choice = choose(task, index, pool, load)
            plan[task.task_id] = choice
            load[choice] += 1
        return plan

    def validate_constellation_assignments(self, constellation: TaskConstellation) -> tuple[bool, list[str]]:
        """Every task that has not ended must have a device: ``(ok, errors)``."""
        errors = [
            f"Task '{task.task_id}' has no device assignment"
            for task in constellation.get_all_tasks()
            if not task.is_terminal and not task.target_device_id
        ]
        if errors:
            log.warning(
                "Constellation %s has %d unassigned tasks", constellation.constellation_id, len(errors)
            )
        return not errors, errors

    def reassign_task_device(
        self, constellation: TaskConstellation, task_id: str, new_device_id: str
    ) -> bool:
        """Move a not-yet-run task to another device; False when the task does not exist."""
        task = constellation.get_task(task_id)
        if task is None:
            return False
        old = task.target_device_id
        task.target_device_id = new_device_id
        log.info("Reassigned task '%s' from device '%s' to '%s'", task_id, old, new_device_id)
        return True

    def clear_device_assignments(self, constellation: TaskConstellation) -> int:
        """Remove the device of every modifiable task; returns how many were cleared."""
        cleared = 0
        for task in constellation.get_modifiable_tasks():
            if task.target_device_id:
                task.target_device_id = None
                cleared += 1
        return cleared

    def get_device_utilization(self, constellation: TaskConstellation) -> dict[str, int]:
        """``{device_id: number of tasks assigned}``."""
        usage: dict[str, int] = {}
        for task in constellation.get_all_tasks():
            if task.target_device_id:
                usage[task.target_device_id] = usage.get(task.target_device_id, 0) + 1
        return usage

    def get_task_device_info(self, constellation: TaskConstellation, task_id: str) -> dict[str, Any] | None:
        """``{device_id, device_type, capabilities, metadata}`` of the task's device, or None."""
        task = constellation.get_task(task_id)
        if task is None or not task.target_device_id or self.device_manager is None:
            return None
        profile = self.device_manager.get_device_info(task.target_device_id)
        if profile is None:
            return None
        return {
            "device_id": profile.device_id,
            "device_type": profile.device_type,
            "capabilities": list(profile.capabilities),
            "metadata": dict(profile.metadata),
        }

    # ----------------------------------------------------------------- registry
    def register_constellation(
        self, constellation: TaskConstellation, metadata: dict[str, Any] | None = None
    ) -> str:
        """Track ``constellation``; returns its id."""
        cid = constellation.constellation_id
        self._managed_constellations[cid] = constellation
        self._constellation_metadata[cid] = dict(metadata or {})
        log.info("Registered constellation '%s' (%s)", constellation.name, cid)
        return cid

    def replace_constellation(self, constellation: TaskConstellation) -> None:
        """Track a merged copy in place of the one registered under the same id."""
        if constellation.constellation_id in self._managed_constellations:
            self._managed_constellations[constellation.constellation_id] = constellation

    def unregister_constellation(self, constellation_id: str) -> bool:
        """Stop tracking; False when it was not tracked."""
        self._constellation_metadata.pop(constellation_id, None)
        return self._managed_constellations.pop(constellation_id, None) is not None

    def get_constellation(self, constellation_id: str) -> TaskConstellation | None:
        """The tracked constellation, or None."""
        return self._managed_constellations.get(constellation_id)

    def list_constellations(self) -> list[dict[str, Any]]:
        """A summary of every tracked constellation."""
        return [
            {
                "constellation_id": cid,
                "name": c.name,
                "state": c.state.value,
                "task_count": c.task_count,
                "dependency_count": c.dependency_count,
                "metadata": self._constellation_metadata.get(cid, {}),
            }
            for cid, c in self._managed_constellations.items()
        ]

    async def get_constellation_status(self, constellation_id: str) -> dict[str, Any] | None:
        """Statistics and task ids per state of a tracked constellation, or None."""
        c = self._managed_constellations.get(constellation_id)
        if c is None:
            return None
        return {
            "constellation_id": constellation_id,
            "name": c.name,
            "state": c.state.value,
            "statistics": c.get_statistics(),
            "ready_tasks": [t.task_id for t in c.get_ready_tasks()],
            "running_tasks": [t.task_id for t in c.get_running_tasks()],
            "completed_tasks": [t.task_id for t in c.get_completed_tasks()],
            "failed_tasks": [t.task_id for t in c.get_failed_tasks()],
            "metadata": self._constellation_metadata.get(constellation_id, {}),
        }


def _usable_preference(
    task: TaskStar, caller: str | None, by_id: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The device ``task`` keeps: the caller's preference when connected (even against the task's
    stated kind: the user named it), else the task's own ``target_device_id`` when connected and
    fitting; None (a strategy chooses) otherwise. Every preference passed over is logged."""
    if caller is not None:
        if caller in by_id:
            missing = task_missing(task, by_id[caller])
            if missing:
                log.warning(
                    "Task '%s': using the requested device '%s' although it lacks %s "
                    "(an explicit device preference wins over the plan's requirement)",
                    task.task_id,
                    caller,
                    " and ".join(missing),
                )
            return caller
        log.warning(
            "Task '%s': the requested device '%s' is not connected (connected: %s); choosing another",
            task.task_id,
            caller,
            ", ".join(by_id),
        )
    own = task.target_device_id
    if own is None or own == caller:
        return None
    if own not in by_id:
        log.warning(
            "Task '%s': its device '%s' is not connected (connected: %s); choosing another",
            task.task_id,
            own,
            ", ".join(by_id),
        )
        return None
    missing = task_missing(task, by_id[own])
    if missing:
        # A device of the wrong kind is no preference: a GUI task on a shell box fails.
        log.warning(
            "Task '%s': its device '%s' lacks %s; choosing another", task.task_id, own, " and ".join(missing)
        )
        return None
    return own
