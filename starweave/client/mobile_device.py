"""``starweave client --platform mobile``: an Android phone as a Galaxy device.

The client runs the MobileAgent's servers (MobileDataCollector, MobileExecutor) in-process, bound to
the phone of ``--serial`` / ``--adb-path`` (else $STARWEAVE_ADB_SERIAL / $STARWEAVE_ADB_PATH, else the
only attached device); the MobileAgent itself reasons on the agent server. Before registering, the
client checks that adb runs and sees the phone (``adb devices``), and announces the phone's
user-installed apps (``pm list packages -3``, short names) next to the kind's capabilities.
"""

from __future__ import annotations

from starweave.config import StarweaveConfig
from starweave.config.models import default_mcp
from starweave.errors import ConfigError
from starweave.session.mobile_runner import (
    MobileOptions,
    apply_device_settings,
    check_device_options,
    device_registry,
    probe_phone,
)
from starweave.tools.mcp_manager import MCPRegistry
from starweave.tools.mobile import AdbError
from starweave.tools.servers.mobile import MobileRegistry

__all__ = ["MAX_APPS", "app_names", "bind_phone", "phone_apps", "phone_registry"]

AGENT_NAME = "MobileAgent"
#: Apps announced at most: every word goes into the ConstellationAgent's prompt.
MAX_APPS = 12
WHAT = "--platform mobile"


def bind_phone(config: StarweaveConfig, serial: str, adb_path: str) -> None:
    """Give ``config`` the MobileAgent's servers (the shipped ones when mcp.yaml has none), for the
    phone of ``serial`` / ``adb_path``; ConfigError for a bad serial or a missing adb."""
    check_device_options(MobileOptions(serial=serial, adb_path=adb_path))
    config.mcp.setdefault(AGENT_NAME, default_mcp()[AGENT_NAME])


def phone_registry(config: StarweaveConfig, serial: str, adb_path: str) -> MobileRegistry:
    """The registry whose mobile servers drive the phone of ``serial`` / ``adb_path`` (give it to the
    client's MCP manager); ConfigError for a stdio mobile server or the options with an http one."""
    options = MobileOptions(serial=serial, adb_path=adb_path)
    return apply_device_settings(config, options) or device_registry(options)


def app_names(packages: list[str]) -> list[str]:
    """Short names of ``packages`` (``com.example.notes`` → ``notes``), unique, at most MAX_APPS."""
    names: list[str] = []
    for package in packages:
        short = package.rsplit(".", 1)[-1].lower()
        if short and short not in names:
            names.append(short)
    return names[:MAX_APPS]


async def phone_apps(registry: MCPRegistry) -> list[str]:
    """Check (:func:`probe_phone`) the phone ``registry``'s servers drive and return its user apps'
    short names; ConfigError (one line) when adb is missing or the phone is not usable."""
    if not isinstance(registry, MobileRegistry):
        raise ConfigError(f"{WHAT}: the client's servers are not bound to a phone (see phone_registry)")
    adb = registry.state.adb
    await probe_phone(adb, WHAT)
    try:
        packages = await adb.list_packages(third_party_only=True)
    except AdbError as exc:
        raise ConfigError(f"{WHAT}: could not list the phone's apps: {exc}") from None
    return app_names(packages)
