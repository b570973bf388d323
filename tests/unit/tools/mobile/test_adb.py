"""The adb layer: validation, escaping for the device's shell, the exact argv, and clear errors."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import time
from pathlib import Path

import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone

from starweave.tools.mobile import Adb, AdbError, check_keycode, check_package, escape_input_text, find_adb
from starweave.tools.mobile.adb import check_int

HOSTILE_TEXTS = [
    'it\'s "quoted"',
    "a; reboot",
    "$(reboot)",
    "`reboot`",
    "x && rm -rf /sdcard",
    "a | sh",
    "100% > /sdcard/x",
    "héllo wörld ✓ 日本",
    "back\\slash * ? ~ # !",
]


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_hostile_text_reaches_input_as_one_literal_argument(text: str) -> None:
    escaped = escape_input_text(text)
    remote_line = " ".join(["input", "text", shlex.quote(escaped)])
    # The device's shell splits the line back into exactly three words, the text unchanged but %s.
    assert shlex.split(remote_line) == ["input", "text", text.replace(" ", "%s")]


@pytest.mark.parametrize(
    "text", ["line\nbreak", "nul\x00", "esc\x1b[2J", "cr\r", "sep\u2028x", "", "x" * 2001]
)
def test_text_with_control_characters_or_out_of_bounds_is_refused(text: str) -> None:
    with pytest.raises(AdbError):
        escape_input_text(text)


def test_spaces_become_percent_s() -> None:
    assert escape_input_text("buy milk today") == "buy%smilk%stoday"


@pytest.mark.parametrize("name", ["com.example.notes", "org.demo_1.app2", "a.b"])
def test_package_names_accepted(name: str) -> None:
    assert check_package(name) == name


@pytest.mark.parametrize(
    "name", ["notes", "com.example.notes;reboot", ".com.x", "com..x", "1com.x", "com.x y", "com.é.x"]
)
def test_package_names_refused(name: str) -> None:
    with pytest.raises(AdbError, match="invalid package name"):
        check_package(name)


def test_keycodes_only_from_the_allowed_list() -> None:
    assert check_keycode("home") == "KEYCODE_HOME"
    assert check_keycode("KEYCODE_VOLUME_UP") == "KEYCODE_VOLUME_UP"
    for bad in ("KEYCODE_CAMERA", "26; reboot", "KEYCODE_HOME KEYCODE_POWER"):
        with pytest.raises(AdbError, match="not allowed"):
            check_keycode(bad)


@pytest.mark.parametrize("value", [-1, 100_001, 1.5, True, "5", None])
def test_coordinates_must_be_integers_in_range(value: object) -> None:
    with pytest.raises(AdbError):
        check_int(value, "x")


def test_serial_is_validated() -> None:
    with pytest.raises(AdbError, match="invalid device serial"):
        Adb("adb", "emu; reboot")


def test_find_adb_prefers_the_configured_path_then_falls_back_to_plain_adb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_adb(str(tmp_path / "my-adb")) == str(tmp_path / "my-adb")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    found = find_adb()
    assert found in ("/usr/bin/adb", "/usr/local/bin/adb", "adb")
    sdk = tmp_path / "Android" / "Sdk" / "platform-tools"
    sdk.mkdir(parents=True)
    (sdk / "adb.exe").write_text("#!/bin/sh\n")
    (sdk / "adb.exe").chmod(0o755)
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path))
    assert find_adb() == str(sdk / "adb.exe")


async def test_the_exact_argv_of_each_command(android_phone: SimulatedPhone) -> None:
    adb = android_phone.adb_client()
    await adb.tap(10, 20)
    await adb.swipe(1, 2, 3, 4, 500)
    await adb.keyevent("BACK")
    await adb.keyevent("KEYCODE_DEL", times=3)
    await adb.input_text("a 'b' $(c)")
    await adb.launch("com.example.notes")
    assert await adb.list_packages() == ["com.example.calculator", "com.example.notes"]
    assert "android" in await adb.list_packages(third_party_only=False)
    assert (await adb.dumpsys_battery())["level"] == "85"
    assert await adb.wm_size() == "Physical size: 1080x2400"
    assert await adb.getprop("ro.build.version.sdk") == "34"
    state = android_phone.state()
    assert set(state["history_serials"]) == {"emulator-5554"}  # every call named the phone with -s
    assert state["history"][0] == "shell input tap 10 20"
    assert android_phone.shell_commands()[:6] == [
        ["input", "tap", "10", "20"],
        ["input", "swipe", "1", "2", "3", "4", "500"],
        ["input", "keyevent", "KEYCODE_BACK"],
        ["input", "keyevent", "KEYCODE_DEL", "KEYCODE_DEL", "KEYCODE_DEL"],
        ["input", "text", "a%s'b'%s$(c)"],
        ["monkey", "-p", "com.example.notes", "-c", "android.intent.category.LAUNCHER", "1"],
    ]
    # The text reached the phone as typed (the device decodes %s; nothing ran in its shell).
    android_phone.update(screen="notes", focused="note")
    await adb.input_text("a 'b' $(c)")
    assert android_phone.state()["note_text"] == "a 'b' $(c)"


async def test_screencap_and_ui_dump(android_phone: SimulatedPhone) -> None:
    adb = android_phone.adb_client(with_serial=False)
    png = await adb.screencap_png()
    assert png.startswith(b"\x89PNG")
    xml = await adb.dump_ui_xml()
    assert xml.startswith("<?xml") and "<hierarchy" in xml
    state = android_phone.state()
    dump_file = state["history"][1].split()[-1]
    assert re.fullmatch(r"/sdcard/starweave_ui_[0-9a-f]{32}\.xml", dump_file)
    assert state["history"] == [
        "exec-out screencap -p",
        f"shell uiautomator dump {dump_file}",
        f"shell cat {dump_file}",
        f"shell rm -f {dump_file}",
    ]
    assert state["history_serials"] == [None] * 4  # no serial given: no -s
    assert not list((android_phone.folder / "sdcard").glob("starweave_ui_*"))  # the dump was removed
    assert await adb.devices() == [("emulator-5554", "device")]


async def test_a_failed_command_is_named_in_the_error(android_phone: SimulatedPhone) -> None:
    android_phone.update(adb_state="offline")
    with pytest.raises(
        AdbError,
        match=r"`adb -s emulator-5554 shell input tap 1 2` failed \(exit 1\): adb: device offline\.$",
    ):
        await android_phone.adb_client().tap(1, 2)
    with pytest.raises(AdbError, match=r"failed \(exit 1\): adb: device 'emulator-9999' not found$"):
        await Adb(str(android_phone.adb_path), "emulator-9999").tap(1, 2)


async def test_monkey_abort_is_an_error(android_phone: SimulatedPhone) -> None:
    with pytest.raises(
        AdbError, match=r"failed \(exit 252\): \*\* No activities found to run, monkey aborted"
    ):
        await android_phone.adb_client().launch("com.not.installed")
    android_phone.update(shell_v1=True)  # an old adb: exit status 0, the abort only in the output
    # One line: monkey's reason, not everything it printed before it.
    with pytest.raises(
        AdbError, match=r"could not launch it: \*\* No activities found to run, monkey aborted\.$"
    ):
        await android_phone.adb_client().launch("com.not.installed")


async def test_missing_binary_and_timeout(tmp_path: Path, android_phone: SimulatedPhone) -> None:
    with pytest.raises(
        AdbError, match=r"adb not found at .*install the Debian 'adb' package or pass --adb-path"
    ):
        await Adb(str(tmp_path / "nope")).tap(1, 1)
    android_phone.update(adb_delay=30)
    slow = Adb(str(android_phone.adb_path), None, timeout=0.5)
    with pytest.raises(AdbError, match=r"`adb shell wm size` timed out after 0.5 s"):
        await slow.wm_size()
    [pid] = android_phone.state()["hung_pids"]
    assert gone(pid)  # the hung adb was killed and reaped, not left sleeping


async def test_invalid_arguments_never_start_adb(android_phone: SimulatedPhone) -> None:
    adb = android_phone.adb_client()
    for call in (
        adb.tap(-5, 1),
        adb.swipe(0, 0, 1, 1, 120_000),
        adb.input_text("a\nreboot"),
        adb.keyevent("KEYCODE_CAMERA"),
        adb.launch("x;reboot"),
        adb.getprop("ro.x; reboot"),
    ):
        with pytest.raises(AdbError):
            await call
    assert android_phone.state()["history"] == []


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer exists (killed AND reaped: a zombie still answers signal 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def hung_pid(phone: SimulatedPhone, limit: float = 30) -> int:
    """The pid of the phone's hung adb call, once it has noted it (polled, with a generous deadline)."""
    deadline = time.monotonic() + limit
    while not phone.state()["hung_pids"]:
        assert time.monotonic() < deadline, "the simulated adb never started"
        time.sleep(0.02)
    pid: int = phone.state()["hung_pids"][0]
    return pid


async def test_a_cancelled_call_kills_and_reaps_adb(android_phone: SimulatedPhone) -> None:
    android_phone.update(adb_delay=60)
    call = asyncio.ensure_future(android_phone.adb_client(with_serial=False).wm_size())
    pid = await asyncio.to_thread(hung_pid, android_phone)
    assert not gone(pid)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert gone(pid)  # reaped before the cancellation reached the caller


async def test_output_is_read_with_a_cap(
    android_phone: SimulatedPhone, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past the cap the command is stopped at once; reading everything first would sit until the
    # 20 s timeout here (the simulated adb keeps its pipe open, hanging after its flood).
    monkeypatch.setattr("starweave.tools.mobile.adb.MAX_OUTPUT_BYTES", 100_000)
    android_phone.update(adb_flood=300_000, adb_delay=60)
    started = time.monotonic()
    with pytest.raises(AdbError, match=r"`adb shell wm size` printed more than 100000 bytes"):
        await android_phone.adb_client(with_serial=False).wm_size()
    assert time.monotonic() - started < 15
    assert gone(hung_pid(android_phone))
