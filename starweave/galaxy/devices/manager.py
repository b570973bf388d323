"""ConstellationDeviceManager: Galaxy's side of AIP (spec B §1.3, E §9.2).

Registers devices, keeps them connected through their agent servers (see
:mod:`starweave.galaxy.devices.connection`) and runs tasks on them: one task per device at a time,
the others waiting in that device's FIFO queue. ``assign_task_to_device`` never raises for a device
problem; it returns an ExecutionResult whose ``status`` and ``error`` say what happened.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlparse

from starweave.errors import TaskRejected
from starweave.galaxy.devices.config import ConstellationConfig
from starweave.galaxy.devices.connection import DeviceConnector
from starweave.galaxy.devices.profile import AgentProfile, DeviceStatus
from starweave.galaxy.devices.queue import QueuedTask
from starweave.galaxy.devices.runtime import failed_result, result_from_task_end, safe_name
from starweave.galaxy.events import EventType
from starweave.galaxy.types import ExecutionResult, now

log = logging.getLogger("starweave.galaxy.devices")

__all__ = ["ConstellationDeviceManager"]

_STOP_WAIT = 10.0


class ConstellationDeviceManager(DeviceConnector):
    """Devices of one constellation: registry, connections, per-device queues and task execution."""

    # ---- registration ---------------------------------------------------------------------
    async def register_device(
        self,
        device_id: str,
        server_url: str,
        os: str = "unknown",
        capabilities: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        max_retries: int = 5,
        auto_connect: bool = True,
        *,
        send_api_key: bool = True,
    ) -> bool:
        """Add a device (and connect it when ``auto_connect``).

        ``send_api_key``: its agent server gets the manager's ``api_key``; False for a device whose
        URL the operator did not write (one added over HTTP), so the key never goes where they did
        not put it.

        True when it is registered and, with ``auto_connect``, connected; False (reason logged)
        for a duplicate id, a URL that is not ws:// or wss://, or a failed connection (which is
        then retried in the background).
        """
        parsed = urlparse(server_url)
        if parsed.scheme not in ("ws", "wss") or not parsed.hostname:
            log.error("Device %s: server_url %r is not a ws:// or wss:// URL", device_id, server_url)
            return False
        try:
            self.registry.register_device(device_id, server_url, os, capabilities, metadata, max_retries)
        except ValueError as exc:
            log.error("Cannot register device %r: %s", device_id, exc)
            return False
        self._runtime[device_id] = self._new_runtime(self.api_key if send_api_key else None)
        self._runtime[device_id].local_token = send_api_key and not self.api_key
        if not auto_connect:
            return True
        return await self.connect_device(device_id)

    async def register_from_config(self, config: ConstellationConfig) -> dict[str, bool]:
        """Register every configured device (connecting them concurrently); ``{device_id: ok}``."""
        devices = config.devices
        outcomes = await asyncio.gather(
            *(
                self.register_device(
                    d.device_id,
                    d.server_url,
                    d.os,
                    d.capabilities,
                    d.metadata,
                    d.max_retries,
                    d.auto_connect,
                    send_api_key=not d.added_over_http,
                )
                for d in devices
            )
        )
        return {d.device_id: ok for d, ok in zip(devices, outcomes, strict=True)}

    # ---- disconnecting ----------------------------------------------------------------------
    async def disconnect_device(self, device_id: str) -> None:
        """Disconnect ``device_id``: queued tasks are cancelled, the running one fails; DISCONNECTED."""
        runtime = self._runtime.get(device_id)
        if runtime is None:
            return
        runtime.disconnecting = True
        background = [t for t in runtime.background() if t is not asyncio.current_task()]
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        runtime.recovering = False
        self.task_queue_manager.clear_queue(
            device_id, "cancelled", f"device '{device_id}' was disconnected before the task started"
        )
        previous = self.registry.update_device_status(device_id, DeviceStatus.DISCONNECTED)
        runtime.last_error = runtime.last_error or "disconnected by the constellation"
        await runtime.endpoint.disconnect_device(device_id)
        runner = runtime.runner
        if runner is not None and not runner.done() and runner is not asyncio.current_task():
            await asyncio.wait({runner}, timeout=_STOP_WAIT)
        if previous != DeviceStatus.DISCONNECTED:
            await self._publish(
                EventType.DEVICE_STATUS_CHANGED,
                device_id,
                {"previous_status": previous.value, "reason": "disconnected by the constellation"},
            )
            await self._publish(
                EventType.DEVICE_DISCONNECTED, device_id, {"reason": "disconnected by the constellation"}
            )

    async def shutdown(self) -> None:
        """Disconnect every device and stop every background task."""
        self._closing = True
        await asyncio.gather(*(self.disconnect_device(d) for d in list(self._runtime)))

    # ---- tasks ----------------------------------------------------------------------------
    async def assign_task_to_device(
        self,
        task_id: str,
        device_id: str,
        task_description: str,
        task_data: dict[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (the spec's API; bounds the device's run)
        on_started: Callable[[], Awaitable[None]] | None = None,
    ) -> ExecutionResult:
        """Run a task on ``device_id`` (after the tasks queued before it) and return its outcome.

        ``timeout`` bounds the device's run (default: the manager's ``task_timeout``). Device
        problems come back as a result with status "failed" or "timeout", never as an exception.
        Cancelling the caller withdraws the task: a queued task leaves the queue; a running one is
        stopped by restarting the device's connection (the server then cancels its session).
        ``on_started`` is awaited when the device really starts the task (after any queue wait).
        """
        queued = QueuedTask(
            task_id=task_id,
            device_id=device_id,
            description=task_description,
            task_data=dict(task_data or {}),
            timeout=self.task_timeout if timeout is None else timeout,
            on_started=on_started,
        )
        refusal = self._refusal(device_id, task_description)
        if refusal is not None:
            log.warning("Task %s not run: %s", task_id, refusal)
            return failed_result(queued, refusal, error_category="not_started")
        self.task_queue_manager.enqueue_task(queued)
        self._kick(device_id)
        try:
            return await queued.future
        except asyncio.CancelledError:
            self._withdraw(queued)
            raise

    def _refusal(self, device_id: str, description: str) -> str | None:
        """Why a task for ``device_id`` cannot even be queued, or None."""
        profile = self.registry.get_device(device_id)
        if profile is None:
            return self.registry.unknown_device_message(device_id)
        if not description.strip():
            return "the task description is empty"
        if self._closing:
            return "the device manager is shutting down"
        runtime = self._runtime[device_id]
        if profile.is_online or (runtime.recovering and runtime.ever_connected):
            return None
        why = f": {runtime.last_error}" if runtime.last_error else ""
        return f"device '{device_id}' is not connected (status: {profile.status.value}){why}"

    def _withdraw(self, queued: QueuedTask) -> None:
        runtime = self._runtime.get(queued.device_id)
        if self.task_queue_manager.remove_task(queued.device_id, queued):
            log.info("Task %s withdrawn from the queue of %s", queued.task_id, queued.device_id)
            return
        if runtime is not None and runtime.current is queued:
            # The only way to stop a session on the device is to drop the connection it runs on.
            self._notify_lost(
                queued.device_id, f"task '{queued.task_id}' was withdrawn; restarting the connection"
            )

    def _kick(self, device_id: str) -> None:
        """Start the next queued task of ``device_id`` if the device is IDLE and free."""
        runtime = self._runtime.get(device_id)
        profile = self.registry.get_device(device_id)
        if runtime is None or profile is None or runtime.current is not None:
            return
        if profile.status != DeviceStatus.IDLE or self._closing:
            return
        queued = self.task_queue_manager.dequeue_task(device_id)
        if queued is None:
            return
        runtime.current = queued
        self.registry.set_device_busy(device_id, queued.task_id)
        runtime.runner = asyncio.create_task(self._run(device_id, queued), name=f"task-{queued.task_id}")

    async def _run(self, device_id: str, queued: QueuedTask) -> None:
        runtime = self._runtime[device_id]
        result: ExecutionResult | None = None
        try:
            await self._publish(
                EventType.DEVICE_STATUS_CHANGED,
                device_id,
                {"previous_status": DeviceStatus.IDLE.value, "reason": f"running task {queued.task_id}"},
            )
            if queued.on_started is not None:
                await queued.on_started()
            result = await self._execute(device_id, queued)
        finally:
            runtime.current = None
            if self.registry.require(device_id).status == DeviceStatus.BUSY:
                await self._set_status(device_id, DeviceStatus.IDLE, f"task {queued.task_id} ended")
            if result is not None:
                queued.resolve(result)
            elif not queued.future.done() and self._closing:
                queued.resolve(failed_result(queued, "the device manager shut down", "cancelled"))
            elif not queued.future.done() and not self.task_queue_manager.contains(device_id, queued):
                # An unexpected error ended the run: the caller must still get an answer.
                queued.resolve(failed_result(queued, f"running task '{queued.task_id}' broke off", "failed"))
            self._kick(device_id)

    async def _execute(self, device_id: str, queued: QueuedTask) -> ExecutionResult | None:
        """Send the task and wait for its TASK_END; None when it was put back in the queue."""
        runtime = self._runtime[device_id]
        endpoint = runtime.endpoint
        runtime.runs += 1
        task_name = safe_name(f"{self.task_name}-{queued.task_id}-{runtime.runs}")[:200]
        session_id = f"{self.constellation_id}@{queued.task_id}@{uuid.uuid4().hex[:8]}"
        meta: dict[str, Any] = {
            "session_id": session_id,
            "task_name": task_name,
            "task_data": queued.task_data,
        }
        start = now()
        request = {"request": queued.description, "task_name": task_name, "session_id": session_id}
        try:
            end = await endpoint.send_task_to_device(device_id, request, timeout=queued.timeout)
        except TimeoutError:
            limit = f"{queued.timeout:g}" if queued.timeout is not None else "?"
            error = f"task '{queued.task_id}' on device '{device_id}' timed out after {limit} s"
            self._notify_lost(device_id, f"{error}; restarting the connection to stop it")
            return failed_result(
                queued, error, "timeout", start, **meta, error_type="timeout", error_category="timeout_error"
            )
        except TaskRejected as exc:
            if not await self._device_present(device_id):
                self._notify_lost(device_id, f"the server no longer has device '{device_id}': {exc.reason}")
                if queued.rejections == 0 and self._runtime[device_id].recovering:
                    # It never started: it waits for the device to come back like the queued ones.
                    queued.rejections += 1
                    self.task_queue_manager.requeue_front(queued)
                    return None
            return failed_result(queued, str(exc), "failed", start, **meta, error_type="rejected")
        except ConnectionError as exc:
            reason = runtime.last_error if runtime.last_error else str(exc)
            error = f"device '{device_id}' disconnected while running task '{queued.task_id}': {reason}"
            return failed_result(
                queued,
                error,
                "failed",
                start,
                **meta,
                error_type="device_disconnection",
                error_category="connection_error",
                disconnected=True,
            )
        result = result_from_task_end(queued, end, start, meta)
        if not result.is_successful and not await self._device_present(device_id):
            self._notify_lost(device_id, f"device '{device_id}' left its agent server: {result.error}")
            result.metadata["disconnected"] = True
        return result

    async def _device_present(self, device_id: str) -> bool:
        """Ask the server whether the device is still connected to it (updates its info if so)."""
        endpoint = self._runtime[device_id].endpoint
        info = await endpoint.request_device_info(device_id, timeout=self.heartbeat_timeout)
        if info is None:
            return False
        self.registry.update_heartbeat(device_id)
        self.registry.update_device_system_info(device_id, info)
        return True

    # ---- queries ----------------------------------------------------------------------------
    def get_connected_devices(self) -> list[str]:
        """Ids of the devices that can take tasks now (CONNECTED, IDLE or BUSY)."""
        return self.registry.get_connected_devices()

    def get_device_info(self, device_id: str) -> AgentProfile | None:
        """The profile of ``device_id``, or None if unknown."""
        return self.registry.get_device(device_id)

    def get_all_devices(self, connected: bool = False) -> dict[str, AgentProfile]:
        """Every profile (only the online ones when ``connected``)."""
        return self.registry.get_all_devices(connected)

    def get_device_capabilities(self, device_id: str) -> list[str]:
        """The device's capabilities (configured and reported); empty if unknown."""
        profile = self.registry.get_device(device_id)
        return list(profile.capabilities) if profile else []

    def get_task_queue_status(self, device_id: str) -> dict[str, Any]:
        """Whether the device is busy, with what, and what waits for it."""
        profile = self.registry.get_device(device_id)
        queued = self.task_queue_manager.get_queued_task_ids(device_id)
        return {
            "device_id": device_id,
            "is_busy": bool(profile and profile.status == DeviceStatus.BUSY),
            "current_task_id": profile.current_task_id if profile else None,
            "queue_size": len(queued),
            "queued_task_ids": queued,
        }

    def last_error(self, device_id: str) -> str | None:
        """Why the device last failed to connect or was lost (None while healthy)."""
        runtime = self._runtime.get(device_id)
        return runtime.last_error if runtime else None
