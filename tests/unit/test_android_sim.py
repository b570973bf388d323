"""The simulated Android phone (tests/helpers/android_sim) answers adb as a device would.

Every call runs the simulator as a subprocess, as Starweave's adb layer will.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from helpers.android_sim import NOTES, SETTINGS, SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from helpers.android_sim.phone import device
from PIL import Image

ATTRIBUTES = [
    "index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
    "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds",
]  # fmt: skip


def out(phone: SimulatedPhone, *args: str) -> str:
    """Run adb, insist on success, return stdout as text."""
    result = phone.adb(*args)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def nodes(phone: SimulatedPhone) -> list[ET.Element]:
    return list(ET.fromstring(phone.dump().encode()).iter("node"))


def rect(node: ET.Element) -> tuple[int, int, int, int]:
    left, top, right, bottom = map(int, re.findall(r"-?\d+", node.attrib["bounds"]))
    return left, top, right, bottom


def find(phone: SimulatedPhone, **wanted: str) -> ET.Element:
    """The one node on screen whose attributes (resource_id= for resource-id) have the given values."""
    keys = {key.replace("_", "-"): value for key, value in wanted.items()}
    found = [n for n in nodes(phone) if all(n.attrib.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, f"{wanted}: {len(found)} nodes"
    return found[0]


def tap_node(phone: SimulatedPhone, **wanted: str) -> None:
    left, top, right, bottom = rect(find(phone, **wanted))
    out(phone, "shell", "input", "tap", str((left + right) // 2), str((top + bottom) // 2))


def screenshot(phone: SimulatedPhone) -> Image.Image:
    return Image.open(io.BytesIO(phone.adb("exec-out", "screencap", "-p", check=True).stdout))


def test_devices_lists_the_phone_or_nothing_when_detached(android_phone: SimulatedPhone) -> None:
    assert out(android_phone, "devices") == "List of devices attached\nemulator-5554\tdevice\n\n"
    assert "model:Starweave_SimPhone" in out(android_phone, "devices", "-l")
    android_phone.set_online(False)
    assert out(android_phone, "devices") == "List of devices attached\n\n"
    failed = android_phone.adb("shell", "wm", "size")
    assert (failed.returncode, failed.stderr.decode()) == (1, "adb: no devices/emulators found\n")
    android_phone.set_online(True)
    offline = subprocess.run([str(android_phone.adb_path), "shell", "wm", "size"], capture_output=True,
                             env=dict(os.environ, STARWEAVE_ANDROID_SIM_OFFLINE="1"))  # fmt: skip
    assert offline.returncode == 1


def test_unknown_serial_and_commands_fail_like_adb(android_phone: SimulatedPhone) -> None:
    assert out(android_phone, "-s", "emulator-5554", "shell", "wm", "size") == "Physical size: 1080x2400\n"
    other = android_phone.adb("-s", "R58N123", "shell", "wm", "size")
    assert (other.returncode, other.stderr.decode()) == (1, "adb: device 'R58N123' not found\n")
    unknown = android_phone.adb("frobnicate")
    assert (unknown.returncode, unknown.stderr.decode()) == (1, "adb: unknown command frobnicate\n")
    missing = android_phone.adb("shell", "frobnicate", "now")
    assert missing.returncode != 0 and "frobnicate: inaccessible or not found" in missing.stderr.decode()
    bad_key = android_phone.adb("shell", "input", "keyevent", "KEYCODE_NOPE")
    assert bad_key.returncode == 1 and "Unknown keycode" in bad_key.stderr.decode()
    assert android_phone.state()["history"][-1] == "shell input keyevent KEYCODE_NOPE"


def test_device_information_commands(android_phone: SimulatedPhone) -> None:
    assert out(android_phone, "shell", "getprop", "ro.product.model") == "Starweave SimPhone\n"
    assert out(android_phone, "shell", "getprop", "ro.build.version.release") == "14\n"
    assert out(android_phone, "shell", "getprop", "ro.build.version.sdk") == "34\n"
    assert out(android_phone, "shell", "wm", "density") == "Physical density: 420\n"
    battery = out(android_phone, "shell", "dumpsys", "battery")
    assert "  level: 85\n" in battery and "  status: 2\n" in battery
    user = out(android_phone, "shell", "pm", "list", "packages", "-3").splitlines()
    assert user == ["package:com.example.notes", "package:com.example.calculator"]
    everything = out(android_phone, "shell", "pm list packages").splitlines()
    assert f"package:{SETTINGS}" in everything and set(user) < set(everything)
    assert all(line.startswith("package:") for line in everything)
    assert out(android_phone, "shell", "pm", "list", "packages", "notes") == f"package:{NOTES}\n"


def test_screencap_pull_rm_and_exec_out(android_phone: SimulatedPhone, tmp_path: Path) -> None:
    assert out(android_phone, "shell", "screencap", "-p", "/sdcard/screen_temp.png") == ""
    local = tmp_path / "shot.png"
    assert "1 file pulled" in out(android_phone, "pull", "/sdcard/screen_temp.png", str(local))
    assert Image.open(local).size == (1080, 2400)
    assert out(android_phone, "shell", "rm", "/sdcard/screen_temp.png") == ""
    gone = android_phone.adb("pull", "/sdcard/screen_temp.png", str(tmp_path / "again.png"))
    assert gone.returncode == 1 and "No such file or directory" in gone.stderr.decode()
    launcher = screenshot(android_phone)
    assert launcher.format == "PNG" and launcher.size == (1080, 2400)
    out(android_phone, "shell", "monkey", "-p", NOTES, "-c", "android.intent.category.LAUNCHER", "1")
    assert screenshot(android_phone).tobytes() != launcher.tobytes()


def test_ui_dump_is_uiautomator_xml_with_nested_bounds(android_phone: SimulatedPhone) -> None:
    dumped = out(android_phone, "shell", "uiautomator", "dump", "/sdcard/window_dump.xml")
    assert dumped == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    xml = out(android_phone, "shell", "cat", "/sdcard/window_dump.xml")
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node "
    )
    root = ET.fromstring(xml.encode())
    assert root.tag == "hierarchy" and rect(root[0]) == (0, 0, 1080, 2400)

    def check(node: ET.Element, outer: tuple[int, int, int, int]) -> None:
        assert list(node.attrib) == ATTRIBUTES
        inner = rect(node)
        assert outer[0] <= inner[0] < inner[2] <= outer[2] and outer[1] <= inner[1] < inner[3] <= outer[3]
        for child in node:
            check(child, inner)

    check(root[0], (0, 0, 1080, 2400))
    icons = [n.attrib["text"] for n in root.iter("node") if n.attrib["clickable"] == "true"]
    assert icons == ["Notes", "Settings", "Calculator"]


def test_tapping_the_notes_icon_opens_notes_drawn_where_the_xml_says(android_phone: SimulatedPhone) -> None:
    tap_node(android_phone, text="Notes")
    assert android_phone.state()["screen"] == "notes"
    save = find(android_phone, resource_id=f"{NOTES}:id/save_button")
    assert (save.attrib["text"], save.attrib["class"], save.attrib["package"]) == (
        "Save",
        "android.widget.Button",
        NOTES,
    )
    left, top, _, bottom = rect(save)
    image = screenshot(android_phone).convert("RGB")
    assert image.getpixel((left + 15, (top + bottom) // 2)) == (0x1A, 0x73, 0xE8)  # the button's blue
    assert image.getpixel((left - 15, (top + bottom) // 2)) == (0xF8, 0xF9, 0xFA)  # the app's background


def test_typing_into_the_focused_field_and_saving_stores_the_note(android_phone: SimulatedPhone) -> None:
    out(android_phone, "shell", "monkey", "-p", NOTES, "-c", "android.intent.category.LAUNCHER", "1")
    out(android_phone, "shell", "input", "text", "lost")  # nothing focused yet: the keystrokes go nowhere
    field = find(android_phone, resource_id=f"{NOTES}:id/note_input")
    assert (field.attrib["text"], field.attrib["focused"]) == (
        "Note",
        "false",
    )  # the hint, as Android reports it
    tap_node(android_phone, resource_id=f"{NOTES}:id/note_input")
    out(android_phone, "shell", "input", "text", "Buy%smilk")  # separate arguments
    out(android_phone, "shell", "input text %s\\&%s'bread'X")  # one command line, escaped and quoted
    out(android_phone, "shell", "input", "keyevent", "KEYCODE_DEL")
    field = find(android_phone, resource_id=f"{NOTES}:id/note_input")
    assert (field.attrib["text"], field.attrib["focused"]) == ("Buy milk & bread", "true")
    refused = android_phone.adb("shell", "input", "text", "a&b")  # an unescaped & would fork on a real shell
    assert refused.returncode == 1 and android_phone.state()["note_text"] == "Buy milk & bread"
    tap_node(android_phone, text="Save")
    state = android_phone.state()
    assert (state["notes"], state["note_text"], state["status_message"]) == (
        ["Buy milk & bread"],
        "",
        "Saved",
    )
    assert find(android_phone, resource_id=f"{NOTES}:id/note_item").attrib["text"] == "Buy milk & bread"
    assert find(android_phone, resource_id=f"{NOTES}:id/status").attrib["text"] == "Saved"


def test_delete_removes_every_saved_note(android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", notes=["one", "two"])
    tap_node(android_phone, text="Delete")
    state = android_phone.state()
    assert (state["notes"], state["status_message"]) == ([], "Deleted 2 notes")
    assert find(android_phone, resource_id=f"{NOTES}:id/empty").attrib["text"] == "No notes yet"


def test_home_back_and_app_launches(android_phone: SimulatedPhone) -> None:
    launched = out(
        android_phone, "shell", "monkey", "-p", NOTES, "-c", "android.intent.category.LAUNCHER", "1"
    )
    assert "Events injected: 1" in launched
    out(android_phone, "shell", "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert android_phone.state()["screen"] == "settings"
    out(android_phone, "shell", "input", "keyevent", "KEYCODE_BACK")
    assert android_phone.state()["screen"] == "notes"
    out(android_phone, "shell", "input", "keyevent", "4")  # BACK by number
    assert android_phone.state()["screen"] == "launcher"
    out(android_phone, "shell", "input", "keyevent", "KEYCODE_BACK")
    assert android_phone.state()["screen"] == "launcher"
    tap_node(android_phone, text="Settings")
    out(android_phone, "shell", "input", "keyevent", "KEYCODE_HOME")
    state = android_phone.state()
    assert (state["screen"], state["back_stack"]) == ("launcher", [])
    unknown = android_phone.adb("shell", "monkey", "-p", "com.example.nothing", "1")
    assert unknown.returncode != 0 and "No activities found" in unknown.stderr.decode()
    assert android_phone.state()["screen"] == "launcher"


def test_settings_switches_toggle(android_phone: SimulatedPhone) -> None:
    tap_node(android_phone, text="Settings")
    wifi = find(android_phone, resource_id=f"{SETTINGS}:id/wifi_switch")
    assert (wifi.attrib["checkable"], wifi.attrib["checked"]) == ("true", "true")
    tap_node(android_phone, resource_id=f"{SETTINGS}:id/wifi_switch")
    assert android_phone.state()["settings"]["wifi"] is False
    assert find(android_phone, resource_id=f"{SETTINGS}:id/wifi_switch").attrib["checked"] == "false"
    tap_node(android_phone, text="Bluetooth")  # the row's label: the row takes the tap
    assert android_phone.state()["settings"] == {"wifi": False, "bluetooth": True, "airplane": False}


def test_swipes_scroll_the_notes_list_only(android_phone: SimulatedPhone) -> None:
    out(android_phone, "shell", "input", "swipe", "540", "1800", "540", "600", "300")  # launcher: nothing
    assert android_phone.state()["notes_scroll"] == 0
    android_phone.update(screen="notes", notes=[f"note {i}" for i in range(20)])
    assert find(android_phone, resource_id=f"{NOTES}:id/notes_list").attrib["scrollable"] == "true"
    shown = {
        n.attrib["text"] for n in nodes(android_phone) if n.attrib["resource-id"] == f"{NOTES}:id/note_item"
    }
    assert "note 0" in shown and "note 19" not in shown
    out(android_phone, "shell", "input", "swipe", "540", "2200", "540", "200")
    assert android_phone.state()["notes_scroll"] == 20 * 160 - (2400 - 800)  # clamped at the end
    shown = {
        n.attrib["text"] for n in nodes(android_phone) if n.attrib["resource-id"] == f"{NOTES}:id/note_item"
    }
    assert "note 0" not in shown and "note 19" in shown


def test_calculator_buttons(android_phone: SimulatedPhone) -> None:
    out(android_phone, "shell", "monkey", "-p", "com.example.calculator", "1")
    for key in "7*6=":
        tap_node(android_phone, text=key)
    assert find(android_phone, resource_id="com.example.calculator:id/result").attrib["text"] == "42"
    state = {"calculator": {"display": "0"}}
    for key in ["1", "2", "+", "3", "*", "2", "-", "/", "4", "="]:
        device._calculate(state, key)
    assert state["calculator"]["display"] == "13.5"
    for key in ["8", "/", "0", "="]:
        device._calculate(state, key)
    assert state["calculator"]["display"] == "Error"


def test_parallel_calls_do_not_corrupt_the_state(android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", focused="note")
    procs = [
        subprocess.Popen(
            [str(android_phone.adb_path), "shell", "input", "text", letter], stderr=subprocess.PIPE
        )
        for letter in "abcdefghij"
    ] + [
        subprocess.Popen(
            [str(android_phone.adb_path), "exec-out", "screencap", "-p"], stdout=subprocess.DEVNULL
        )
    ]
    assert [proc.wait(timeout=60) for proc in procs] == [0] * 11
    state = json.loads((android_phone.folder / "state.json").read_text())
    assert sorted(state["note_text"]) == list("abcdefghij")
    assert len(state["history"]) == 11
    assert not list(android_phone.folder.glob(".state-*"))  # no temporary file left behind


def test_the_wrapper_finds_its_phone_without_the_environment(android_phone: SimulatedPhone) -> None:
    bare = subprocess.run([str(android_phone.adb_path), "shell", "wm", "size"], capture_output=True,
                          env={"PATH": "/usr/bin:/bin"}, timeout=30)  # fmt: skip
    assert bare.stdout == b"Physical size: 1080x2400\n"
    checked_in = Path(__file__).parents[1] / "helpers" / "android_sim" / "adb"  # for benchmarks and by hand
    home = [str(checked_in), "shell", "input", "keyevent", "KEYCODE_HOME"]
    by_hand = subprocess.run(home, capture_output=True, env=dict(os.environ, **android_phone.env), timeout=30)
    assert (
        by_hand.returncode == 0
        and android_phone.state()["history"][-1] == "shell input keyevent KEYCODE_HOME"
    )
    android_phone.update(notes=["x"], screen="notes")
    android_phone.reset()
    state = android_phone.state()
    assert (state["screen"], state["notes"], state["history"]) == ("launcher", [], [])
