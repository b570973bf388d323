"""WebUIService: the WebUI's Galaxy session: one fleet, chat requests run one at a time.

The GalaxyClient connects the devices once (a ``--local`` fleet or a devices file) and keeps them for
the WebUI's lifetime; every chat ``request`` runs one GalaxySession on them, as ``starweave galaxy``
does for each request. The chat (the request, the agent's thoughts, the final answer) is published
to every page and kept for the state snapshot of pages that connect later or reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from starweave.errors import StarweaveError
from starweave.galaxy.client import GalaxyClient
from starweave.galaxy.devices import DeviceConfig
from starweave.galaxy.events import AgentEvent, Event, EventType
from starweave.galaxy.webui.broadcast import Broadcaster
from starweave.galaxy.webui.devices import DeviceRequestError, append_device
from starweave.galaxy.webui.serializer import serialize_value

__all__ = ["BUSY_MESSAGE", "MAX_MESSAGES", "WebUIService"]

log = logging.getLogger("starweave.galaxy.webui")

MAX_MESSAGES = 500
BUSY_MESSAGE = "A request is already running; wait for it or reset the session"
SOURCE_ID = "webui.server"


class WebUIService:
    """Owns the GalaxyClient, the broadcaster and the chat; runs requests and resets."""

    def __init__(self, client: GalaxyClient, broadcaster: Broadcaster | None = None) -> None:
        self.client = client
        self.broadcaster = broadcaster or Broadcaster()
        self.session = {
            "id": uuid.uuid4().hex,
            "display_name": "Galaxy Session",
            "started_at": time.time(),
        }
        self.messages: list[dict[str, Any]] = []
        self._request: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._adding = asyncio.Lock()
        client.bus.subscribe(self.broadcaster)
        client.bus.subscribe(self, {EventType.AGENT_RESPONSE})

    @property
    def devices_file(self) -> Path | None:
        """The devices file new devices are appended to (None for a ``--local`` fleet)."""
        return self.client.options.devices_file

    @property
    def running(self) -> bool:
        """True while a request runs."""
        return self._request is not None and not self._request.done()

    async def start(self) -> None:
        """Connect the devices (raises StarweaveError when none connects)."""
        await self.client.initialize()

    async def aclose(self) -> None:
        """Stop a running request, then the devices, the fleet and the model client."""
        await self._cancel_request()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self.client.bus.unsubscribe(self.broadcaster)
        self.client.bus.unsubscribe(self)
        for page in list(self.broadcaster.pages):
            self.broadcaster.close_page(page)
        await self.client.shutdown()

    # ---- messages to pages ----------------------------------------------------------------
    def welcome(self) -> dict[str, Any]:
        """The first message a page gets."""
        return {
            "type": "welcome",
            "message": "Connected to Galaxy Web UI",
            "timestamp": time.time(),
            "session": dict(self.session),
        }

    def all_devices(self) -> dict[str, dict[str, Any]]:
        """``{device_id: DeviceInfo}`` of every registered device."""
        manager = self.client.device_manager
        if manager is None:
            return {}
        devices = {device_id: p.to_dict() for device_id, p in manager.get_all_devices().items()}
        return serialize_value(devices)

    def device_snapshot(self) -> dict[str, Any]:
        """The device panel's state, in the reference's ``device_snapshot`` shape."""
        devices = self.all_devices()
        return {
            "event_type": "device_snapshot",
            "source_id": SOURCE_ID,
            "timestamp": time.time(),
            "data": {"event_name": "device_snapshot", "device_count": len(devices)},
            "all_devices": devices,
        }

    def state_snapshot(self) -> dict[str, Any]:
        """Everything a (re)connecting page needs to show the current state."""
        constellation = self.broadcaster.constellation
        return {
            "type": "state_snapshot",
            "timestamp": time.time(),
            "constellation": serialize_value(constellation) if constellation is not None else None,
            "messages": list(self.messages),
            "events": self.broadcaster.history(),
            "running": self.running,
        }

    def chat(self, role: str, text: str, **extra: Any) -> None:
        """Add a chat message and send it to every page."""
        message = {"type": "chat", "role": role, "text": text, "timestamp": time.time(), **extra}
        self.messages.append(message)
        del self.messages[:-MAX_MESSAGES]
        self.broadcaster.publish(message)

    async def on_event(self, event: Event) -> None:
        """The ConstellationAgent's answers appear in the chat as its thoughts."""
        if isinstance(event, AgentEvent) and event.output_type == "response":
            thought = str(event.output_data.get("thought") or "").strip()
            if thought:
                self.chat("agent", thought, status=str(event.output_data.get("status") or ""))

    async def add_device(self, device: DeviceConfig) -> dict[str, Any]:
        """Append ``device`` to the devices file, register it and (auto_connect) connect it in the
        background; DeviceRequestError for the 404/409/500 answers."""
        manager = self.client.device_manager
        if self.devices_file is None or manager is None:
            raise DeviceRequestError(404, "devices.yaml not found")
        async with self._adding:  # one change of the devices file at a time
            # Off the event loop: the file is read, loaded and written.
            await asyncio.to_thread(append_device, self.devices_file, device, set(manager.get_all_devices()))
        registered = await manager.register_device(
            device.device_id,
            device.server_url,
            device.os,
            device.capabilities,
            device.metadata,
            device.max_retries,
            auto_connect=False,
            send_api_key=not device.added_over_http,
        )
        if not registered:
            raise DeviceRequestError(500, f"Failed to add device: {device.device_id} was not registered")
        if device.auto_connect:
            task = asyncio.create_task(
                self._connect(device.device_id), name=f"webui-connect-{device.device_id}"
            )
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        self.broadcaster.publish(self.device_snapshot())
        return self.all_devices()[device.device_id]

    async def _connect(self, device_id: str) -> None:
        manager = self.client.device_manager
        if manager is not None:
            await manager.connect_device(device_id)
        self.broadcaster.publish(self.device_snapshot())

    # ---- commands from pages --------------------------------------------------------------
    def submit(self, text: str) -> str | None:
        """Start ``text`` as a request; the reason it cannot start (or None)."""
        text = text.strip()
        if not text:
            return "The request is empty; type what Galaxy should do"
        if self.running:
            return BUSY_MESSAGE
        self.chat("user", text)
        self._request = asyncio.create_task(self._run(text), name="webui-request")
        return None

    async def _run(self, text: str) -> None:
        try:
            outcome = await self.client.process_request(text)
        except StarweaveError as exc:
            self.chat("agent", f"The request failed: {exc}", final=True, status="FAIL")
            return
        final = outcome.answer or outcome.error or f"The request {outcome.status}."
        status = "FINISH" if outcome.agent_status == "FINISH" else "FAIL"
        self.chat("agent", final, final=True, status=status, log_path=str(outcome.log_path))

    async def wait_idle(self) -> None:
        """Return when no request is running."""
        task = self._request
        if task is not None:
            await asyncio.wait({task})

    async def _cancel_request(self) -> None:
        task = self._request
        self._request = None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def reset(self) -> None:
        """Cancel a running request, clear the chat, the DAG and the events; every page gets a fresh
        state snapshot. The devices stay connected."""
        await self._cancel_request()
        self.messages.clear()
        self.broadcaster.clear()
        self.broadcaster.publish(self.state_snapshot())
