"""Device kinds: what a device client registers as (``starweave client --platform KIND``), the agent
the server runs for it, and the capabilities Galaxy sees (devices.yaml ``os:``, AgentProfile).

One table, read by the client (which servers to start, what to announce), the server (which
session to run) and Galaxy (which ``os`` values devices.yaml accepts). Adding a kind is one entry
here plus, on the server, one entry in ``starweave.session.service.SESSION_KINDS``.

Capabilities are short words the ConstellationAgent reads next to each device ("shell",
"desktop", "gui", app names) and the assignment strategies match a task's requirement against.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from starweave.errors import ConfigError

__all__ = [
    "DESKTOP_APPS",
    "DEVICE_KINDS",
    "KIND_ALIASES",
    "DeviceKind",
    "device_capabilities",
    "device_kind",
    "kind_key",
    "kind_names",
]


@dataclass(frozen=True)
class DeviceKind:
    """One kind of device: its server-side agent and what it can do."""

    name: str
    #: A few words for help texts and the README.
    summary: str
    #: The device agent the server runs for it (its model block in agents.yaml).
    agent: str
    #: Announced at registration; Galaxy adds configured ones.
    capabilities: tuple[str, ...]
    #: The device client needs a graphical session (DISPLAY / WAYLAND_DISPLAY on Linux).
    needs_display: bool = False
    #: Applications looked for on PATH; the ones found join the capabilities.
    look_for_apps: bool = False


#: Applications a Linux desktop device announces when they are installed (kept short: every word
#: goes into the ConstellationAgent's prompt).
DESKTOP_APPS = ("mousepad", "gnome-calculator", "gedit", "libreoffice", "firefox")

DEVICE_KINDS: dict[str, DeviceKind] = {
    kind.name: kind
    for kind in (
        DeviceKind("linux", "Linux shell", "LinuxAgent", ("linux", "shell", "files")),
        DeviceKind("darwin", "macOS shell", "LinuxAgent", ("darwin", "shell", "files")),
        DeviceKind(
            "linux-desktop",
            "Linux desktop, GUI apps through AT-SPI",
            "HostAgent",
            ("linux", "desktop", "gui", "shell", "files"),
            needs_display=True,
            look_for_apps=True,
        ),
        DeviceKind(
            "windows",
            "Windows desktop, GUI apps through UI Automation",
            "HostAgent",
            ("windows", "desktop", "gui", "windows_apps"),
            needs_display=True,
        ),
        DeviceKind("mobile", "Android phone over adb", "MobileAgent", ("mobile", "android", "touch")),
    )
}

#: Other spellings of a kind (the reference's docs use both "mobile" and "android"; its task
#: ``device_type`` says "macos" for what a device client registers as "darwin").
KIND_ALIASES = {"android": "mobile", "macos": "darwin"}


def kind_key(name: str) -> str:
    """``name`` lowercased with an alias replaced by its kind (``macos`` -> ``darwin``); any other
    word (a free-text devices.yaml ``os`` such as "ios") comes back lowercased as it is."""
    key = name.strip().lower()
    return KIND_ALIASES.get(key, key)


def kind_names() -> str:
    """``linux, darwin, linux-desktop, windows, mobile`` (for error messages)."""
    return ", ".join(DEVICE_KINDS)


def device_kind(name: str) -> DeviceKind:
    """The kind called ``name`` (any case, aliases accepted); ConfigError naming the kinds otherwise."""
    kind = DEVICE_KINDS.get(kind_key(name))
    if kind is None:
        raise ConfigError(f"unknown device platform {name!r}; use one of {kind_names()}")
    return kind


def device_capabilities(kind: DeviceKind) -> list[str]:
    """The kind's capabilities plus, for a desktop that looks for them, the installed DESKTOP_APPS."""
    found = [app for app in DESKTOP_APPS if kind.look_for_apps and shutil.which(app)]
    return [*kind.capabilities, *found]
