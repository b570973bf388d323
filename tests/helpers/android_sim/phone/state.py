"""The device state: one JSON file in the folder named by STARWEAVE_ANDROID_SIM_DIR.

Every adb call is a new process, so each command runs under an exclusive ``fcntl`` lock on
``state.lock`` for its whole read-modify-write, and the state is replaced atomically (tmp +
``os.replace``): concurrent calls are serialised and a reader never sees half a file.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DIR_ENV = "STARWEAVE_ANDROID_SIM_DIR"
OFFLINE_ENV = "STARWEAVE_ANDROID_SIM_OFFLINE"
DEFAULT_SERIAL = "emulator-5554"
STATE_FILE = "state.json"
LOCK_FILE = "state.lock"
HISTORY_LIMIT = 200

DEFAULT_STATE: dict[str, Any] = {
    "serial": DEFAULT_SERIAL,
    "online": True,
    "adb_state": "device",  # what `adb devices` lists: device | unauthorized | offline
    "ui_dump_fails": False,  # uiautomator dump writes nothing and says nothing (as a busy phone can)
    "adb_delay": 0.0,  # seconds every adb call hangs before it answers (a wedged phone or adb server)
    "adb_flood": 0,  # bytes of output every adb call prints before hanging/answering (a runaway command)
    "shell_v1": False,  # an old adb without the shell protocol: `adb shell` exits 0, stderr on stdout
    "hung_pids": [],  # the pids of the adb calls that hung (so a test can check they were killed)
    "screen": "launcher",
    "back_stack": [],
    "focused": None,
    "note_text": "",
    "notes": [],
    "notes_scroll": 0,
    "status_message": "",
    "permission_dialog": False,
    "settings": {"wifi": True, "bluetooth": False, "airplane": False},
    "calculator": {"display": "0"},
    "history": [],
    "history_serials": [],  # the -s serial each history entry was sent with (None: no -s)
}


def default_state() -> dict[str, Any]:
    """A fresh copy of the state a new device starts with."""
    return copy.deepcopy(DEFAULT_STATE)


def sim_dir() -> Path:
    """The folder holding the state and the simulated /sdcard (created on first use)."""
    configured = os.environ.get(DIR_ENV)
    folder = (
        Path(configured)
        if configured
        else Path(tempfile.gettempdir()) / f"starweave-android-sim-{os.getuid()}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sdcard_path(folder: Path, remote: str) -> Path | None:
    """The local file standing for a device path under /sdcard (None for any other device path)."""
    parts = [p for p in remote.split("/") if p]
    if not parts or parts[0] != "sdcard" or ".." in parts:
        return None
    return folder.joinpath("sdcard", *parts[1:])


def read_state(folder: Path) -> dict[str, Any]:
    """The current state (the defaults when the device was never used), without locking."""
    try:
        stored = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default_state()
    state = default_state()
    state.update(stored)
    return state


def write_state(folder: Path, state: dict[str, Any]) -> None:
    """Replace the state file atomically."""
    state["history"] = state.get("history", [])[-HISTORY_LIMIT:]
    state["history_serials"] = state.get("history_serials", [])[-HISTORY_LIMIT:]
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".state-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=1)
    os.replace(tmp, folder / STATE_FILE)


@contextmanager
def locked_state(folder: Path) -> Iterator[dict[str, Any]]:
    """Hold the device lock; yield the state to change; save it when the block ends normally."""
    with open(folder / LOCK_FILE, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = read_state(folder)
            yield state
            write_state(folder, state)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
