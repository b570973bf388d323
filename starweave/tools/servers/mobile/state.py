"""MobileServerState: what MobileDataCollector and MobileExecutor share, with the spec's caches.

| cache       | TTL   | invalidated                                                      |
|-------------|-------|------------------------------------------------------------------|
| apps        | 300 s | manually (only the unfiltered user-app list is cached)           |
| controls    | 5 s   | after every action that changes the screen (tap, swipe, type...) |
| ui_tree     | 5 s   | with the controls (they are parsed from it)                      |
| device_info | 60 s  | manually                                                         |

The TTLs decide when a data-collection call reads the device again. The action tools look controls
up in the LAST list read, whatever its age (a model step takes longer than 5 s); after an action the
list is gone, so a stale id can never be clicked.

One state per device (adb path + serial) per process, as the reference's singleton: the two servers
of a device meet on it whether they run in-process (``type: local``, see ``binding.py``: a session
passes its device's state to the servers it builds) or in one ``mcp serve mobile``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from starweave.tools.mobile.adb import Adb, find_adb
from starweave.tools.servers.mobile.uitree import MobileControl, parse_controls

_V = TypeVar("_V")
Clock = Callable[[], float]

TTL_SECONDS = {"apps": 300.0, "controls": 5.0, "ui_tree": 5.0, "device_info": 60.0}
CACHE_TYPES = (*TTL_SECONDS, "all")
ENV_ADB_PATH = "STARWEAVE_ADB_PATH"
ENV_ADB_SERIAL = "STARWEAVE_ADB_SERIAL"


@dataclass
class TimedValue(Generic[_V]):
    """One cached value and when it was stored (by the state's clock)."""

    ttl: float
    value: _V | None = None
    stamp: float = 0.0

    def fresh(self, now: float) -> _V | None:
        """The value if it is younger than the TTL, else None."""
        if self.value is not None and now - self.stamp < self.ttl:
            return self.value
        return None

    def put(self, value: _V, now: float) -> _V:
        """Store ``value`` as of ``now``."""
        self.value, self.stamp = value, now
        return value

    def clear(self) -> None:
        """Forget the value."""
        self.value = None


@dataclass
class MobileServerState:
    """The device, the caches and the last lists (controls and apps by id) of one phone."""

    adb: Adb
    clock: Clock = time.monotonic
    apps: TimedValue[list[str]] = field(default_factory=lambda: TimedValue(TTL_SECONDS["apps"]))
    ui_tree: TimedValue[str] = field(default_factory=lambda: TimedValue(TTL_SECONDS["ui_tree"]))
    controls: TimedValue[list[MobileControl]] = field(
        default_factory=lambda: TimedValue(TTL_SECONDS["controls"])
    )
    device_info: TimedValue[dict[str, Any]] = field(
        default_factory=lambda: TimedValue(TTL_SECONDS["device_info"])
    )
    last_apps: dict[str, str] = field(default_factory=dict)  # id -> package of the last app list

    async def read_ui_tree(self, force: bool = False) -> str:
        """The uiautomator XML (cached 5 s)."""
        now = self.clock()
        cached = None if force else self.ui_tree.fresh(now)
        return cached if cached is not None else self.ui_tree.put(await self.adb.dump_ui_xml(), now)

    async def read_controls(self, force: bool = False) -> list[MobileControl]:
        """The filtered, numbered controls (cached 5 s); parsed from a fresh or cached tree."""
        now = self.clock()
        cached = None if force else self.controls.fresh(now)
        if cached is not None:
            return cached
        xml = await self.read_ui_tree(force)
        # A long list's dump is megabytes of XML: parsed off the event loop (heartbeats, other calls).
        return self.controls.put(await asyncio.to_thread(parse_controls, xml), now)

    def find_control(self, control_id: str) -> MobileControl | None:
        """The control ``control_id`` of the last list read (any age), or None."""
        for control in self.controls.value or []:
            if control.id == str(control_id):
                return control
        return None

    def after_action(self) -> None:
        """The screen changed: forget the controls and the tree they came from."""
        self.controls.clear()
        self.ui_tree.clear()

    def invalidate(self, cache_type: str = "all") -> list[str]:
        """Clear one cache (controls | apps | ui_tree | device_info) or all; the names cleared."""
        names = list(TTL_SECONDS) if cache_type == "all" else [cache_type]
        for name in names:
            getattr(self, name).clear()
        if "apps" in names:
            self.last_apps = {}
        return names


_STATES: dict[Adb, MobileServerState] = {}


def device_adb(serial: str = "", adb_path: str = "") -> Adb:
    """The device given by ``serial`` / ``adb_path`` (the ``--serial`` / ``--adb-path`` options), each
    falling back to $STARWEAVE_ADB_SERIAL / $STARWEAVE_ADB_PATH, then to the auto-detected adb and
    the only attached phone."""
    path = str(Path(adb_path).expanduser()) if adb_path else os.environ.get(ENV_ADB_PATH) or None
    return Adb(find_adb(path), serial or os.environ.get(ENV_ADB_SERIAL) or None)


def mobile_state(adb: Adb | None = None) -> MobileServerState:
    """The one MobileServerState of ``adb``'s device in this process (created on first request)."""
    device = adb or device_adb()
    state = _STATES.get(device)
    if state is None:
        state = _STATES[device] = MobileServerState(device)
    return state
