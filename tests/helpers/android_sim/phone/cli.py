"""The `adb` command line of the simulated phone: global options, host commands, shell and pull."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from . import shell
from .state import OFFLINE_ENV, locked_state, read_state, sdcard_path, sim_dir

USAGE_ERROR = 1
_HOST_NOOPS = ("start-server", "kill-server", "wait-for-device", "reconnect")


def _options(argv: list[str]) -> tuple[str | None, list[str]]:
    """Split adb's global options from the command; returns (the serial asked for, the command)."""
    serial = os.environ.get("ANDROID_SERIAL") or None
    args = list(argv)
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option == "-s" and args:
            serial = args.pop(0)
        elif option in ("-t", "-H", "-P", "-L") and args:
            args.pop(0)  # transport id / server host / port / socket: one simulated device, one server
        elif option not in ("-d", "-e", "-a"):
            raise ValueError(f"adb: unknown option {option}")
    return serial, args


def _devices(state: dict[str, Any], args: list[str], online: bool) -> tuple[str, str, int]:
    lines = "List of devices attached\n"
    if online:
        detail = (
            " product:simphone model:Starweave_SimPhone device:simphone transport_id:1"
            if "-l" in args
            else ""
        )
        lines += f"{state['serial']}\t{state['adb_state']}{detail}\n"
    return lines + "\n", "", 0


def _pull(folder: Path, args: list[str]) -> tuple[bytes, str, int]:
    files = [a for a in args if not a.startswith("-")]
    if not files:
        return b"", "adb: usage: adb pull [-a] REMOTE... LOCAL\n", USAGE_ERROR
    remote, local = files[0], Path(files[1] if len(files) > 1 else ".")
    source = sdcard_path(folder, remote)
    if source is None or not source.is_file():
        return b"", f"adb: error: failed to stat remote object '{remote}': No such file or directory\n", 1
    target = local / source.name if local.is_dir() else local
    try:
        shutil.copyfile(source, target)
    except OSError as error:
        return b"", f"adb: error: cannot create '{target}': {error.strerror}\n", 1
    size = source.stat().st_size
    return f"{remote}: 1 file pulled, 0 skipped. 42.0 MB/s ({size} bytes in 0.001s)\n".encode(), "", 0


def _device_command(folder: Path, state: dict[str, Any], args: list[str]) -> tuple[bytes, str, int]:
    command, rest = args[0], args[1:]
    if command in ("shell", "exec-out"):
        try:
            words = shell.split_command_line(" ".join(rest))
        except ValueError as error:
            return b"", f"{error}\n", 1
        result = shell.run(shell.Context(folder, state), words)
        if state["shell_v1"]:
            return result.out + result.err.encode(), "", 0
        return result.out, result.err, result.code
    if command == "pull":
        return _pull(folder, rest)
    if command == "get-state":
        return b"device\n", "", 0
    if command == "get-serialno":
        return f"{state['serial']}\n".encode(), "", 0
    return b"", f"adb: unknown command {command}\n", USAGE_ERROR


def execute(argv: list[str]) -> tuple[bytes, str, int]:
    """Run one adb invocation against the device in the state folder: (stdout, stderr, exit code)."""
    try:
        serial, args = _options(argv)
    except ValueError as error:
        return b"", f"{error}\n", USAGE_ERROR
    if not args:
        return (
            b"",
            "adb: no command given (the simulated adb answers devices, shell, exec-out, pull)\n",
            USAGE_ERROR,
        )
    if args[0] == "version":
        return b"Android Debug Bridge version 1.0.41\nVersion 34.0.5-starweave-simulator\n", "", 0
    if args[0] in _HOST_NOOPS:
        return b"", "", 0
    folder = sim_dir()
    with locked_state(folder) as state:
        online = bool(state["online"]) and os.environ.get(OFFLINE_ENV, "") in ("", "0")
        if args[0] == "devices":
            out, err, code = _devices(state, args[1:], online)
            return out.encode(), err, code
        if not online or (serial is not None and serial != state["serial"]):
            message = f"adb: device '{serial}' not found" if serial else "adb: no devices/emulators found"
            return b"", message + "\n", 1
        if state["adb_state"] != "device":  # real adb's words for a phone it lists but cannot use
            return b"", f"adb: device {state['adb_state']}.\n", 1
        state["history"].append(" ".join(args))
        state["history_serials"].append(serial)
        return _device_command(folder, state, args)


def _misbehave(folder: Path) -> None:
    """The ``adb_flood`` and ``adb_delay`` knobs: note this process's pid in ``hung_pids``, print junk,
    then hang (outside the lock, so that the phone stays usable by other calls)."""
    state = read_state(folder)
    if not (state["adb_flood"] or state["adb_delay"]):
        return
    with locked_state(folder) as locked:
        locked["hung_pids"].append(os.getpid())
    sys.stdout.buffer.write(b"x" * int(state["adb_flood"]))
    sys.stdout.flush()
    time.sleep(float(state["adb_delay"]))


def main() -> int:
    """Entry point of the `adb` stand-in."""
    _misbehave(sim_dir())
    out, err, code = execute(sys.argv[1:])
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return code
