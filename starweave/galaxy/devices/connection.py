"""The connection half of the device manager: connect, watch, lose and win back devices.

Each device gets its own :class:`ManagedEndpoint` (AIP ConstellationEndpoint) to the agent server
the device is registered with. A device is watched by a monitor that asks the server for the
device's info every ``heartbeat_interval`` (the endpoint also sends AIP heartbeats): no answer within
the heartbeat timeout (2 × interval), or the server saying the device is gone, counts as a loss,
as does the endpoint reporting a dropped connection. A loss marks the device FAILED at once (so no
task is sent to it), fails its running task, drops the connection (the server then cancels the
device-side session) and reconnects with exponential backoff; queued tasks wait meanwhile and
resume once the device is IDLE again, or get a failed result if it is given up.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from starweave.aip.resilience import ReconnectionStrategy
from starweave.aip.transport import Transport, WebSocketTransport
from starweave.errors import InvalidArgumentError
from starweave.galaxy.devices.profile import ONLINE_STATUSES, DeviceStatus
from starweave.galaxy.devices.queue import TaskQueueManager
from starweave.galaxy.devices.registry import DeviceRegistry
from starweave.galaxy.devices.runtime import DeviceRuntime, ManagedEndpoint, safe_name
from starweave.galaxy.events import DeviceEvent, EventBus, EventType
from starweave.server.local_token import read_local_token

log = logging.getLogger("starweave.galaxy.devices")

__all__ = ["DEFAULT_TASK_TIMEOUT", "DeviceConnector"]

DEFAULT_TASK_TIMEOUT = 1000.0


class DeviceConnector:
    """Connections, health and reconnection of the registered devices (base of the device manager)."""

    def __init__(
        self,
        task_name: str = "galaxy",
        heartbeat_interval: float = 30.0,
        reconnect_delay: float = 5.0,
        event_bus: EventBus | None = None,
        api_key: str | None = None,
        transport_factory: Callable[[], Transport] | None = None,
        *,
        task_timeout: float | None = DEFAULT_TASK_TIMEOUT,
        max_backoff: float = 300.0,
    ) -> None:
        if heartbeat_interval <= 0:
            raise InvalidArgumentError("heartbeat_interval must be positive")
        if reconnect_delay < 0:
            raise InvalidArgumentError("reconnect_delay must not be negative")
        self.task_name = task_name
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_timeout = 2.0 * heartbeat_interval
        self.reconnect_delay = reconnect_delay
        self.max_backoff = max(max_backoff, reconnect_delay)
        self.event_bus = event_bus if event_bus is not None else EventBus()
        self.api_key = api_key
        # Longest one task may run on a device (None: no bound); see ConstellationDeviceManager.
        self.task_timeout = task_timeout
        self.transport_factory: Callable[[], Transport] = transport_factory or WebSocketTransport
        # Unique per manager: a server refuses a second client with the same id.
        self.constellation_id = f"{safe_name(task_name)}-{uuid.uuid4().hex[:6]}"
        self.registry = DeviceRegistry()
        self.task_queue_manager = TaskQueueManager()
        self._runtime: dict[str, DeviceRuntime] = {}
        self._closing = False

    # ---- set-up ---------------------------------------------------------------------------
    def _new_runtime(self, api_key: str | None) -> DeviceRuntime:
        endpoint = ManagedEndpoint(
            self.constellation_id,
            task_name=self.task_name,
            api_key=api_key,
            heartbeat_interval=self.heartbeat_interval,
            registration_timeout=min(30.0, max(5.0, 2.0 * self.heartbeat_interval)),
            transport_factory=self.transport_factory,
            on_lost=self._notify_lost,
        )
        return DeviceRuntime(endpoint=endpoint)

    # ---- connecting -----------------------------------------------------------------------
    async def connect_device(self, device_id: str) -> bool:
        """Connect, register, fetch the device's info and make it IDLE; False (reason logged) if not.

        A failed first connection is retried in the background with backoff while the device's
        ``max_retries`` allow it.
        """
        profile = self.registry.get_device(device_id)
        runtime = self._runtime.get(device_id)
        if profile is None or runtime is None:
            log.warning("%s", self.registry.unknown_device_message(device_id))
            return False
        if profile.is_online:
            return True
        if runtime.recovering:
            # A reconnection loop owns the device; a second attempt beside it would race it.
            log.info("Device %s is being reconnected in the background", device_id)
            return False
        runtime.disconnecting = False
        self.registry.increment_connection_attempts(device_id)
        if await self._attempt(device_id):
            return True
        if profile.connection_attempts < profile.max_retries and not self._closing:
            self._start_reconnection(device_id)
        return False

    async def _attempt(self, device_id: str) -> bool:
        """One connection attempt: CONNECTING → CONNECTED → (device info) → IDLE, or FAILED."""
        profile = self.registry.require(device_id)
        runtime = self._runtime[device_id]
        endpoint = runtime.endpoint
        await self._set_status(device_id, DeviceStatus.CONNECTING, "connecting")
        if runtime.local_token:
            endpoint.api_key = await asyncio.to_thread(read_local_token, profile.server_url)
        if not await endpoint.connect_to_device(device_id, profile.server_url):
            runtime.last_error = endpoint.last_error(device_id) or "connection refused"
            await self._set_status(device_id, DeviceStatus.FAILED, runtime.last_error)
            return False
        await self._set_status(device_id, DeviceStatus.CONNECTED, "registered with the agent server")
        self.registry.update_heartbeat(device_id)
        info = await endpoint.request_device_info(device_id, timeout=self.heartbeat_timeout + 5.0)
        if info is not None:
            self.registry.update_device_system_info(device_id, info)
        else:
            log.warning("No device info for %s: %s", device_id, endpoint.last_error(device_id))
        if profile.status != DeviceStatus.CONNECTED or not endpoint.is_device_connected(device_id):
            return False  # lost again while asking for its info; the loss handling took over
        runtime.ever_connected = True
        runtime.last_error = None
        self.registry.reset_connection_attempts(device_id)
        await self._set_status(device_id, DeviceStatus.IDLE, "ready")
        runtime.monitor = asyncio.create_task(self._monitor(device_id), name=f"monitor-{device_id}")
        await self._publish(EventType.DEVICE_CONNECTED, device_id, {"reason": "connected"})
        log.info("🟢 Device %s connected via %s", device_id, profile.server_url)
        self._kick(device_id)
        return True

    # ---- health ---------------------------------------------------------------------------
    async def _monitor(self, device_id: str) -> None:
        """Ask the server about the device every interval; silence or "not connected" is a loss."""
        endpoint = self._runtime[device_id].endpoint
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            if self.registry.require(device_id).status not in ONLINE_STATUSES:
                return
            info = await endpoint.request_device_info(device_id, timeout=self.heartbeat_timeout)
            if self.registry.require(device_id).status not in ONLINE_STATUSES:
                return
            if info is None:
                why = endpoint.last_error(device_id) or "no answer"
                self._notify_lost(device_id, f"heartbeat check failed: {why}")
                return
            self.registry.update_heartbeat(device_id)
            self.registry.update_device_system_info(device_id, info)

    def _notify_lost(self, device_id: str, reason: str) -> None:
        """Mark the device FAILED now (nothing more is sent to it) and recover in the background."""
        profile = self.registry.get_device(device_id)
        runtime = self._runtime.get(device_id)
        if profile is None or runtime is None or runtime.disconnecting:
            return
        if profile.status not in ONLINE_STATUSES:
            return  # already failed, connecting (that attempt reports) or disconnected
        previous = self.registry.update_device_status(device_id, DeviceStatus.FAILED)
        runtime.last_error = reason
        runtime.recovering = True
        log.warning("🔴 Device %s lost: %s", device_id, reason)
        runtime.lost = asyncio.create_task(
            self._after_loss(device_id, previous, reason), name=f"lost-{device_id}"
        )

    async def _after_loss(self, device_id: str, previous: DeviceStatus, reason: str) -> None:
        runtime = self._runtime[device_id]
        await self._publish(
            EventType.DEVICE_STATUS_CHANGED,
            device_id,
            {"previous_status": previous.value, "reason": reason},
        )
        await self._publish(EventType.DEVICE_DISCONNECTED, device_id, {"reason": reason})
        monitor = runtime.monitor
        if monitor is not None and monitor is not asyncio.current_task():
            monitor.cancel()
        # Dropping the connection fails what still waits on it and makes the server cancel the
        # device-side session of a task we gave up on.
        await runtime.endpoint.disconnect_device(device_id)
        if self._closing or runtime.disconnecting:
            runtime.recovering = False
            return
        self._start_reconnection(device_id)

    def _start_reconnection(self, device_id: str) -> None:
        runtime = self._runtime[device_id]
        if runtime.reconnect is not None and not runtime.reconnect.done():
            return
        runtime.recovering = True
        runtime.reconnect = asyncio.create_task(self._reconnect(device_id), name=f"reconnect-{device_id}")

    async def _reconnect(self, device_id: str) -> None:
        """Reconnect with backoff (reconnect_delay · 2^(n−1)); give the device up after max_retries."""
        profile = self.registry.require(device_id)
        runtime = self._runtime[device_id]
        strategy = ReconnectionStrategy(
            max_retries=profile.max_retries,
            initial_backoff=self.reconnect_delay,
            max_backoff=self.max_backoff,
        )
        attempt = 0
        try:
            while strategy.should_retry(attempt + 1) and not self._closing:
                attempt += 1
                await strategy.wait(attempt)
                self.registry.increment_connection_attempts(device_id)
                log.debug("Reconnecting to %s (attempt %d/%d)", device_id, attempt, profile.max_retries)
                if await self._attempt(device_id):
                    return
        finally:
            runtime.recovering = False
        if self._closing or runtime.disconnecting:
            return
        error = (
            f"device '{device_id}' could not be reconnected after {attempt} attempt(s) "
            f"(max_retries {profile.max_retries}): {runtime.last_error or 'unknown error'}"
        )
        runtime.last_error = error
        log.error("%s", error)
        self.task_queue_manager.clear_queue(device_id, "failed", error)

    # ---- dispatch hook (the manager runs queued tasks) --------------------------------------
    def _kick(self, device_id: str) -> None:
        """Start the device's next queued task if it is IDLE; overridden by the manager."""

    # ---- events ---------------------------------------------------------------------------
    async def _set_status(self, device_id: str, status: DeviceStatus, reason: str) -> None:
        previous = self.registry.update_device_status(device_id, status)
        if previous != status:
            await self._publish(
                EventType.DEVICE_STATUS_CHANGED,
                device_id,
                {"previous_status": previous.value, "reason": reason},
            )

    async def _publish(self, event_type: EventType, device_id: str, data: dict[str, Any]) -> None:
        profile = self.registry.require(device_id)
        await self.event_bus.publish_event(
            DeviceEvent(
                event_type=event_type,
                source_id=f"device_manager.{device_id}",
                data=data,
                device_id=device_id,
                device_status=profile.status.value,
                device_info=profile.to_dict(),
                all_devices=self.registry.snapshot(),
            )
        )
