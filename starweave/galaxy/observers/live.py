"""LiveViewObserver: the terminal view of a Galaxy run.

On a terminal it keeps a rich ``Live`` display up to date: the DAG with each task's state and
device, the devices' states, elapsed time, tokens and cost. When the output is not a terminal
(a pipe, a log file, CI) it prints one plain line per event instead, so nothing is redrawn.

Tokens and cost are summed from AGENT_RESPONSE ``output_data`` keys ``prompt_tokens``,
``completion_tokens`` and ``cost`` when present. Rendering happens on the event loop only (rich's
auto-refresh thread is off), so the view never reads a constellation while it is being changed;
a small asyncio ticker redraws once a second to keep the clock moving.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.text import Text

from starweave.galaxy.constellation import TaskConstellation
from starweave.galaxy.events import AgentEvent, DeviceEvent, Event, EventType, TaskEvent

from .live_render import event_message, full_view, task_device

RECENT_EVENTS = 6
_CONSTELLATION_KEYS = ("new_constellation", "constellation", "updated_constellation")


class LiveViewObserver:
    """Shows the run live on a terminal, or as plain progress lines elsewhere."""

    def __init__(
        self,
        console: Console | None = None,
        title: str = "starweave galaxy",
        max_tasks: int = 40,
        refresh_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        min_redraw_interval: float = 0.05,
    ) -> None:
        self.console = console or Console(highlight=False)
        self.title = title
        self.max_tasks = max_tasks
        self.refresh_interval = refresh_interval
        self._clock = clock
        self._started_at = clock()
        self.constellation: TaskConstellation | None = None
        self.task_states: dict[str, str] = {}
        self.task_devices: dict[str, str] = {}
        self.devices: dict[str, dict[str, Any]] = {}
        self.usage: dict[str, float] = {"prompt_tokens": 0.0, "completion_tokens": 0.0, "cost": 0.0}
        self.recent: deque[str] = deque(maxlen=RECENT_EVENTS)
        self.min_redraw_interval = min_redraw_interval
        self._last_redraw = 0.0
        self._live: Live | None = None
        self._ticker: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def interactive(self) -> bool:
        """True when the console is a terminal (Live redraws); False for plain lines."""
        return self.console.is_terminal

    @property
    def elapsed(self) -> float:
        """Seconds since the view was created or last started."""
        return self._clock() - self._started_at

    def seed_devices(self, devices: list[dict[str, Any]]) -> None:
        """Show devices known before the view started (their connect events were published earlier)."""
        for info in devices:
            self.devices[str(info.get("device_id"))] = dict(info)

    def start(self) -> None:
        """Reset the clock and, on a terminal, open the Live display (and its ticker when a loop runs)."""
        self._started_at = self._clock()
        if not self.interactive or self._live is not None:
            return
        self._live = Live(self.render(), console=self.console, auto_refresh=False, transient=False)
        self._live.start()
        with contextlib.suppress(RuntimeError):  # no running loop: refresh on events only
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    def stop(self) -> None:
        """Draw the final state and close the Live display (a no-op when not started)."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._live is not None:
            self._live.update(self.render(), refresh=True)
            self._live.stop()
            self._live = None

    async def __aenter__(self) -> LiveViewObserver:
        self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def _tick(self) -> None:
        while self._live is not None:
            await asyncio.sleep(self.refresh_interval)
            if self._live is not None:
                self._live.update(self.render(), refresh=True)

    # ------------------------------------------------------------------ events
    async def on_event(self, event: Event) -> None:
        """Fold the event into the view's state, then redraw (or print one line)."""
        self._absorb(event)
        message = event_message(event, self.constellation)
        if message:
            self.recent.append(f"[{self.elapsed:7.1f}s] {message}")
        if self._live is not None:
            # Bursts of events (a wide fan-out finishing) redraw at most every min_redraw_interval;
            # the ticker and stop() draw whatever was skipped.
            now = time.monotonic()
            if now - self._last_redraw >= self.min_redraw_interval:
                self._last_redraw = now
                self._live.update(self.render(), refresh=True)
        elif not self.interactive and message:
            self.console.print(Text(f"[{self.elapsed:7.1f}s] {message}"), soft_wrap=True)

    def _absorb(self, event: Event) -> None:
        for key in _CONSTELLATION_KEYS:
            value = event.data.get(key)
            if isinstance(value, TaskConstellation):
                self.constellation = value
                break
        if isinstance(event, TaskEvent):
            if event.status:
                self.task_states[event.task_id] = event.status
            device = task_device(event, self.constellation)
            if device:
                self.task_devices[event.task_id] = device
        elif isinstance(event, DeviceEvent):
            for device_id, info in (event.all_devices or {}).items():
                self.devices[device_id] = dict(info)
            info = dict(event.device_info or {})
            info["status"] = event.device_status or info.get("status")
            self.devices.setdefault(event.device_id, {}).update(info)
        elif isinstance(event, AgentEvent) and event.event_type is EventType.AGENT_RESPONSE:
            for key in self.usage:
                value = event.output_data.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    self.usage[key] += float(value)

    # ------------------------------------------------------------------ rendering
    def render(self) -> RenderableType:
        """The whole view as one renderable (usable without Live, e.g. for a final print)."""
        return full_view(
            self.title,
            self.elapsed,
            self.constellation,
            self.task_states,
            self.task_devices,
            self.devices,
            self.usage,
            list(self.recent),
            self.max_tasks,
        )
