"""A simulated Android phone for the mobile tests: an `adb` stand-in with real screens.

No Android device or emulator exists on the test machines, so ``sim_adb.py`` answers the adb
commands Starweave's mobile tools send (``devices``, ``shell screencap|uiautomator|input|monkey|pm|
getprop|wm|dumpsys|cat|rm``, ``exec-out screencap -p``, ``pull``) with real uiautomator XML and
rendered 1080x2400 PNGs. Screens: a launcher (Notes, Settings, Calculator), a Notes app (a "Note"
field, Save, Delete, the saved notes list), Settings (Wi-Fi, Bluetooth, Airplane mode switches) and a
Calculator. The state is a JSON file in a folder (``STARWEAVE_ANDROID_SIM_DIR``).

Use from a test module::

    from helpers.android_sim import SimulatedPhone
    from helpers.android_sim import android_phone as android_phone  # the fixture

    def test_x(android_phone: SimulatedPhone):
        run_cli(["run", "--agent", "mobile", "--adb-path", str(android_phone.adb_path), ...])
        assert android_phone.state()["notes"] == ["Buy milk"]
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from starweave.tools.mobile import Adb

from .phone.state import DEFAULT_SERIAL, DIR_ENV, OFFLINE_ENV, default_state, locked_state, read_state
from .phone.ui import CALCULATOR, LAUNCHER, NOTES, SETTINGS

__all__ = [
    "CALCULATOR",
    "DIR_ENV",
    "LAUNCHER",
    "NOTES",
    "OFFLINE_ENV",
    "SETTINGS",
    "SimulatedPhone",
    "android_phone",
]

SIM_ADB = Path(__file__).with_name("sim_adb.py")


class SimulatedPhone:
    """One simulated phone whose state lives in ``folder``.

    ``adb_path`` is an executable wrapper (this interpreter + sim_adb.py, with the folder baked in as
    the default of STARWEAVE_ANDROID_SIM_DIR), so passing it as --adb-path is enough even when the
    code under test runs adb with a reduced environment. ``env`` holds the variables to set for
    anything else that should find the phone.
    """

    def __init__(self, folder: Path, serial: str = DEFAULT_SERIAL) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.serial = serial
        self.adb_path = self.folder / "bin" / "adb"
        self.adb_path.parent.mkdir(exist_ok=True)
        self.adb_path.write_text(
            "#!/bin/sh\n"
            f': "${{{DIR_ENV}:={shlex.quote(str(self.folder))}}}"\n'
            f"export {DIR_ENV}\n"
            f'exec {shlex.quote(sys.executable)} {shlex.quote(str(SIM_ADB))} "$@"\n'
        )
        self.adb_path.chmod(0o755)
        self.reset()

    @property
    def client_options(self) -> dict[str, str]:
        """The ``starweave client --platform mobile`` options (ClientOptions fields) of this phone."""
        return {"serial": self.serial, "adb_path": str(self.adb_path)}

    @property
    def env(self) -> dict[str, str]:
        """Environment variables pointing the simulator (run as plain sim_adb.py) at this phone."""
        return {DIR_ENV: str(self.folder)}

    def state(self) -> dict[str, Any]:
        """The device state: screen, back_stack, focused, note_text, notes, notes_scroll,
        status_message, settings{wifi,bluetooth,airplane}, calculator{display}, online, serial,
        history (the adb device commands received, newest last) and history_serials (the -s of
        each), the misbehaviour knobs adb_state, ui_dump_fails, adb_delay, adb_flood, and hung_pids."""
        return read_state(self.folder)

    def adb_client(self, *, with_serial: bool = True, timeout: float = 20.0) -> Adb:
        """Starweave's adb layer on this phone (``with_serial=False``: no -s, the only phone)."""
        return Adb(str(self.adb_path), self.serial if with_serial else None, timeout=timeout)

    def shell_commands(self) -> list[list[str]]:
        """The words of each `adb shell` command received, split as the device's sh splits them."""
        return [shlex.split(line)[1:] for line in self.state()["history"] if line.startswith("shell ")]

    def update(self, **fields: Any) -> None:
        """Change state fields directly (e.g. ``notes=[...]`` or ``screen="notes"``) to set up a test."""
        with locked_state(self.folder) as state:
            unknown = set(fields) - set(state)
            if unknown:
                raise KeyError(f"unknown simulator state fields: {sorted(unknown)}")
            state.update(fields)

    def reset(self) -> None:
        """Back to a fresh phone on its launcher (this serial, online), /sdcard emptied."""
        shutil.rmtree(self.folder / "sdcard", ignore_errors=True)
        with locked_state(self.folder) as state:
            state.clear()
            state.update(default_state(), serial=self.serial)

    def set_online(self, online: bool) -> None:
        """Attach or detach the phone: detached, `adb devices` lists nothing and commands fail."""
        self.update(online=online)

    def adb(self, *args: str, check: bool = False, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
        """Run the simulated adb (bytes out, as screencap needs)."""
        return subprocess.run(
            [str(self.adb_path), *args],
            capture_output=True,
            check=check,
            timeout=timeout,
            env=dict(os.environ, **self.env),
        )

    def dump(self) -> str:
        """The current screen's uiautomator XML, through adb as a tool would get it."""
        self.adb("shell", "uiautomator", "dump", "/sdcard/window_dump.xml", check=True)
        return self.adb("shell", "cat", "/sdcard/window_dump.xml", check=True).stdout.decode()

    def __repr__(self) -> str:
        return f"SimulatedPhone({str(self.folder)!r}, serial={self.serial!r})"


@pytest.fixture
def android_phone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimulatedPhone]:
    """A fresh simulated phone for one test; its folder is exported as STARWEAVE_ANDROID_SIM_DIR."""
    phone = SimulatedPhone(tmp_path / "android-sim")
    for key, value in phone.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv(OFFLINE_ENV, raising=False)
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    yield phone
