"""Galaxy's event system (spec B §7.1, E §10): typed events and an in-process publish/subscribe bus.

Producers (orchestrator, device manager, ConstellationAgent) publish events; observers (live view,
metrics, synchronizer, agent progress, logs) subscribe to some event types or to all of them.
``publish_event`` awaits every interested observer concurrently and isolates their failures: an
observer that raises is logged and the others still run.

Unlike the reference there is no process-wide singleton forced on callers: each GalaxySession owns
its bus (so two sessions never see each other's events); ``get_event_bus()`` still gives a default
bus for callers that want one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger("starweave.galaxy.events")


class EventType(StrEnum):
    """Every event Galaxy publishes (values as in the reference)."""

    TASK_STARTED = "task_started"
    TASK_COMPLETED = "task_completed"
    TASK_FAILED = "task_failed"
    CONSTELLATION_STARTED = "constellation_started"
    CONSTELLATION_COMPLETED = "constellation_completed"
    CONSTELLATION_FAILED = "constellation_failed"
    CONSTELLATION_MODIFIED = "constellation_modified"
    AGENT_RESPONSE = "agent_response"
    AGENT_ACTION = "agent_action"
    DEVICE_CONNECTED = "device_connected"
    DEVICE_DISCONNECTED = "device_disconnected"
    DEVICE_STATUS_CHANGED = "device_status_changed"


@dataclass
class Event:
    """Base event: what happened, who published it, when (epoch seconds) and a payload."""

    event_type: EventType
    source_id: str
    timestamp: float = field(default_factory=time.time)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskEvent(Event):
    """A task started, completed or failed (``data``: constellation_id, newly_ready_tasks, constellation)."""

    task_id: str = ""
    status: str = ""
    result: Any = None
    error: BaseException | str | None = None


@dataclass
class ConstellationEvent(Event):
    """A constellation started, completed, failed or was modified by the agent."""

    constellation_id: str = ""
    constellation_state: str = ""
    new_ready_tasks: list[str] = field(default_factory=list)


@dataclass
class AgentEvent(Event):
    """The ConstellationAgent answered (output_type "response") or acted ("action")."""

    agent_name: str = ""
    agent_type: str = ""
    output_type: str = ""
    output_data: dict[str, Any] = field(default_factory=dict)


@dataclass
class DeviceEvent(Event):
    """A device connected, disconnected or changed status."""

    device_id: str = ""
    device_status: str = ""
    device_info: dict[str, Any] = field(default_factory=dict)
    all_devices: dict[str, dict[str, Any]] = field(default_factory=dict)


@runtime_checkable
class IEventObserver(Protocol):
    """Receives the events it subscribed to."""

    async def on_event(self, event: Event) -> None:
        """Handle one event; exceptions are logged by the bus, never propagated to the publisher."""
        ...


class EventBus:
    """Publish/subscribe by event type; observers subscribed with no types receive everything."""

    def __init__(self) -> None:
        self._by_type: dict[EventType, list[IEventObserver]] = {}
        self._all: list[IEventObserver] = []

    def subscribe(self, observer: IEventObserver, event_types: Iterable[EventType] | None = None) -> None:
        """Deliver ``event_types`` (all events when None) to ``observer``; subscribing twice is a no-op."""
        if event_types is None:
            if observer not in self._all:
                self._all.append(observer)
            return
        for event_type in event_types:
            observers = self._by_type.setdefault(event_type, [])
            if observer not in observers:
                observers.append(observer)

    def unsubscribe(self, observer: IEventObserver) -> None:
        """Stop delivering anything to ``observer``."""
        if observer in self._all:
            self._all.remove(observer)
        for observers in self._by_type.values():
            if observer in observers:
                observers.remove(observer)

    def observers_for(self, event_type: EventType) -> list[IEventObserver]:
        """Who receives ``event_type``, in subscription order, each once."""
        seen: list[IEventObserver] = []
        for observer in [*self._by_type.get(event_type, ()), *self._all]:
            if observer not in seen:
                seen.append(observer)
        return seen

    async def publish_event(self, event: Event) -> None:
        """Deliver ``event`` to its observers concurrently; returns when all of them are done."""
        observers = self.observers_for(event.event_type)
        if not observers:
            return
        if len(observers) == 1:
            await self._deliver(observers[0], event)
            return
        await asyncio.gather(*(self._deliver(o, event) for o in observers))

    @staticmethod
    async def _deliver(observer: IEventObserver, event: Event) -> None:
        try:
            await observer.on_event(event)
        except asyncio.CancelledError:
            raise
        except Exception:  # one observer's bug must not break the publisher or the others
            log.exception("Observer %r failed on %s", observer, event.event_type.value)


_default_bus: EventBus | None = None


def get_event_bus() -> EventBus:
    """The process's default bus (created on first use)."""
    global _default_bus
    if _default_bus is None:
        _default_bus = EventBus()
    return _default_bus
