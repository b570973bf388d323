"""The adb layer: validation, escaping for the device's shell, the exact argv, and clear errors."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
import time
from pathlib import Path

import pytest
from helpers.mobile_kit import fake_device

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


async def test_the_exact_argv_of_each_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device = fake_device(tmp_path, monkeypatch)
    adb = device.adb
    await adb.tap(10, 20)
    await adb.swipe(1, 2, 3, 4, 500)
    await adb.keyevent("BACK")
    await adb.keyevent("KEYCODE_DEL", times=3)
    await adb.input_text("a 'b' $(c)")
    await adb.launch("com.example.notes")
    assert await adb.list_packages() == ["com.example.notes", "com.example.settings", "org.demo.calculator"]
    assert "android" in await adb.list_packages(third_party_only=False)
    assert (await adb.dumpsys_battery())["level"] == "87"
    assert await adb.wm_size() == "Physical size: 1080x2340"
    assert await adb.getprop("ro.build.version.sdk") == "34"
    calls = device.calls()
    assert all(c["argv"][:2] == ["-s", "emulator-5554"] for c in calls)
    assert calls[0]["argv"] == ["-s", "emulator-5554", "shell", "input", "tap", "10", "20"]
    assert device.remote()[:6] == [
        ["input", "tap", "10", "20"],
        ["input", "swipe", "1", "2", "3", "4", "500"],
        ["input", "keyevent", "KEYCODE_BACK"],
        ["input", "keyevent", "KEYCODE_DEL", "KEYCODE_DEL", "KEYCODE_DEL"],
        ["input", "text", "a%s'b'%s$(c)"],
        ["monkey", "-p", "com.example.notes", "-c", "android.intent.category.LAUNCHER", "1"],
    ]


async def test_screencap_and_ui_dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device = fake_device(tmp_path, monkeypatch, serial=None)
    png = await device.adb.screencap_png()
    assert png.startswith(b"\x89PNG")
    xml = await device.adb.dump_ui_xml()
    assert xml.startswith("<?xml") and "<hierarchy" in xml
    argvs = [c["argv"] for c in device.calls()]
    dump_file = argvs[1][-1]
    assert re.fullmatch(r"/sdcard/starweave_ui_[0-9a-f]{32}\.xml", dump_file)
    assert argvs == [
        ["exec-out", "screencap", "-p"],
        ["shell", "uiautomator", "dump", dump_file],
        ["shell", "cat", dump_file],
        ["shell", "rm", "-f", dump_file],
    ]
    assert await device.adb.devices() == [("emulator-5554", "device")]


async def test_a_failed_command_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = fake_device(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_ADB_FAIL", "tap")
    with pytest.raises(
        AdbError, match=r"`adb -s emulator-5554 shell input tap 1 2` failed \(exit 1\): error: device offline"
    ):
        await device.adb.tap(1, 2)


async def test_monkey_abort_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device = fake_device(tmp_path, monkeypatch)
    with pytest.raises(AdbError, match="could not launch"):
        await device.adb.launch("com.not.installed")


async def test_missing_binary_and_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        AdbError, match=r"adb not found at .*install the Debian 'adb' package or pass --adb-path"
    ):
        await Adb(str(tmp_path / "nope")).tap(1, 1)
    device = fake_device(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_ADB_SLEEP", "30")
    slow = Adb(device.adb.path, None, timeout=0.5)
    with pytest.raises(AdbError, match=r"`adb shell wm size` timed out after 0.5 s"):
        await slow.wm_size()


async def test_invalid_arguments_never_start_adb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device = fake_device(tmp_path, monkeypatch)
    for call in (
        device.adb.tap(-5, 1),
        device.adb.swipe(0, 0, 1, 1, 120_000),
        device.adb.input_text("a\nreboot"),
        device.adb.keyevent("KEYCODE_CAMERA"),
        device.adb.launch("x;reboot"),
        device.adb.getprop("ro.x; reboot"),
    ):
        with pytest.raises(AdbError):
            await call
    assert device.calls() == []


def slow_adb(tmp_path: Path, body: str) -> tuple[Adb, Path]:
    """An adb stand-in that writes its pid to a file, then runs ``body`` in its own place (exec)."""
    pid_file = tmp_path / "adb.pid"
    script = tmp_path / "slow-adb"
    script.write_text(f'#!/bin/sh\necho $$ > "{pid_file}"\n{body}\n')
    script.chmod(0o755)
    return Adb(str(script), None, timeout=20.0), pid_file


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer exists (killed AND reaped: a zombie still answers signal 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def poll_pid(pid_file: Path, limit: float = 30) -> int:
    """The pid the stand-in wrote, once it is there (polled, with a generous deadline)."""
    deadline = time.monotonic() + limit
    while not (pid_file.is_file() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the stand-in never started"
        time.sleep(0.02)
    return int(pid_file.read_text())


async def wait_for_pid(pid_file: Path) -> int:
    return await asyncio.to_thread(poll_pid, pid_file)


async def test_a_cancelled_call_kills_and_reaps_adb(tmp_path: Path) -> None:
    adb, pid_file = slow_adb(tmp_path, "exec sleep 60")
    call = asyncio.ensure_future(adb.wm_size())
    pid = await wait_for_pid(pid_file)
    assert not gone(pid)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert gone(pid)  # reaped before the cancellation reached the caller


async def test_output_is_read_with_a_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the cap the command is stopped at once; reading everything first would sit until the
    # 20 s timeout here (the stand-in keeps its pipe open).
    monkeypatch.setattr("starweave.tools.mobile.adb.MAX_OUTPUT_BYTES", 100_000)
    writer = "import sys, time; sys.stdout.buffer.write(bytes(300_000)); sys.stdout.flush(); time.sleep(60)"
    adb, pid_file = slow_adb(tmp_path, f"exec {shlex.quote(sys.executable)} -c {shlex.quote(writer)}")
    started = time.monotonic()
    with pytest.raises(AdbError, match=r"`adb shell wm size` printed more than 100000 bytes"):
        await adb.wm_size()
    assert time.monotonic() - started < 15
    assert gone(poll_pid(pid_file))
