"""``starweave client --platform mobile``: an Android phone as a Galaxy device.

The client runs the MobileAgent's servers (MobileDataCollector, MobileExecutor) in-process, bound to
the phone of ``--serial`` / ``--adb-path`` (else $STARWEAVE_ADB_SERIAL / $STARWEAVE_ADB_PATH, else the
only attached device); the MobileAgent itself reasons on the agent server. Before registering, the
client checks that adb runs and sees the phone (``adb devices``), and announces the phone's
user-installed apps (``pm list packages -3``, short names) next to the kind's capabilities.
"""

from __future__ import annotations

from starweave.config import StarweaveConfig
from starweave.config.models import ShellConfig, default_mcp
from starweave.errors import ConfigError
from starweave.session.mobile_runner import MobileOptions, apply_device_settings, check_device_options
from starweave.tools.mobile import AdbError
from starweave.tools.servers.mobile.state import state_for_session

__all__ = ["MAX_APPS", "app_names", "bind_phone", "phone_apps"]

AGENT_NAME = "MobileAgent"
#: Apps announced at most: every word goes into the ConstellationAgent's prompt.
MAX_APPS = 12
ADB_HINT = "enable USB debugging on the phone and check `adb devices`"


def bind_phone(config: StarweaveConfig, serial: str, adb_path: str) -> None:
    """Give ``config`` the MobileAgent's servers (the shipped ones when mcp.yaml has none) and point
    them at the phone of ``serial`` / ``adb_path``; ConfigError for a bad serial or a missing adb."""
    mobile = MobileOptions(serial=serial, adb_path=adb_path)
    check_device_options(mobile)
    config.mcp.setdefault(AGENT_NAME, default_mcp()[AGENT_NAME])
    apply_device_settings(config, mobile)


def app_names(packages: list[str]) -> list[str]:
    """Short names of ``packages`` (``com.example.notes`` → ``notes``), unique, at most MAX_APPS."""
    names: list[str] = []
    for package in packages:
        short = package.rsplit(".", 1)[-1].lower()
        if short and short not in names:
            names.append(short)
    return names[:MAX_APPS]


async def phone_apps(shell: ShellConfig) -> list[str]:
    """Check that adb sees the phone bound to ``shell`` and return its user apps' short names;
    ConfigError (one line) when adb is missing, the phone is not attached or several are."""
    adb = state_for_session(shell).adb
    try:
        attached = await adb.devices()
    except AdbError as exc:
        raise ConfigError(f"--platform mobile: {exc}") from None
    ready = [serial for serial, state in attached if state == "device"]
    listed = ", ".join(f"{serial} ({state})" for serial, state in attached) or "none"
    if adb.serial and adb.serial not in ready:
        raise ConfigError(
            f"--platform mobile: adb does not see the phone {adb.serial} (attached: {listed}); {ADB_HINT}"
        )
    if not adb.serial and len(ready) != 1:
        problem = "no phone is attached" if not ready else f"several phones are attached ({listed})"
        raise ConfigError(f"--platform mobile: {problem}; pass --serial SERIAL ({ADB_HINT})")
    try:
        packages = await adb.list_packages(third_party_only=True)
    except AdbError as exc:
        raise ConfigError(f"--platform mobile: could not list the phone's apps: {exc}") from None
    return app_names(packages)
