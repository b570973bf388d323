"""The mobile stack against a REAL Android phone: the same adb layer, MCP servers and device client the
simulated phone's tests drive, pointed at an attached phone.

The phone is ``STARWEAVE_ADB_SERIAL`` when set, else the one ``adb devices`` lists as ``device``
(the first when several are). The module is skipped only when there is no adb program or no such
device (USB debugging off, or the computer not authorised); ``STARWEAVE_ADB_PATH`` picks the adb
program (default: found as ``--adb-path`` finds it). These tests only read the screen, list apps
and press HOME: nothing on the phone changes but the screen shown. The typing test
(``STARWEAVE_ADB_TYPE_TEST=1``) types a string full of shell characters into the text field
focused on the phone, reads it back and deletes it again. See README "The mobile tests against a
real phone".

    .venv/bin/python -m pytest -q tests/integration/test_mobile_real_device.py

(The module also runs against the simulated phone: STARWEAVE_ADB_PATH=<a SimulatedPhone's adb_path>.)
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from mcp import Client

from starweave.client.device_info import DeviceInfoProvider
from starweave.client.runner import ClientOptions, build_device_client, probe_device
from starweave.tools.mobile import Adb, find_adb
from starweave.tools.servers.mobile import (
    MobileServerState,
    create_data_collector_server,
    create_executor_server,
)
from starweave.tools.servers.mobile.state import ENV_ADB_PATH, ENV_ADB_SERIAL

ADB = find_adb(os.environ.get(ENV_ADB_PATH) or None)
TYPE_TEST_ENV = "STARWEAVE_ADB_TYPE_TEST"


def _adb_server_running() -> bool:
    """True when an adb server already listens on its default port (5037)."""
    try:
        with socket.create_connection(("127.0.0.1", 5037), timeout=2):
            return True
    except OSError:
        return False


def pick_phone(adb: str, wanted: str) -> tuple[str, str]:
    """``(serial, "")`` of the phone to test (``wanted``, else the first usable one ``adb devices``
    lists), or ``("", why not)``. An adb server this started for nothing is stopped again, so a
    machine without a phone is left with no adb daemon running."""
    was_running = _adb_server_running()
    try:
        listed = subprocess.run([adb, "devices"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"no adb program ({adb}: {exc}); install platform-tools or set {ENV_ADB_PATH}"
    if not was_running and "device" not in [
        line.split()[-1] for line in listed.stdout.splitlines()[1:] if line.split()
    ]:
        subprocess.run([adb, "kill-server"], capture_output=True, timeout=30, check=False)
    usable = [p[0] for p in (line.split() for line in listed.stdout.splitlines()[1:]) if p[1:2] == ["device"]]
    if wanted:
        return (wanted, "") if wanted in usable else ("", f"{ENV_ADB_SERIAL}={wanted} is not attached")
    if not usable:
        return "", "no Android device attached (`adb devices` lists none as 'device')"
    return usable[0], ""


SERIAL, WHY_NOT = pick_phone(ADB, os.environ.get(ENV_ADB_SERIAL, ""))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not SERIAL, reason=f"no real phone: {WHY_NOT}")]


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


async def test_the_adb_layer_reads_the_phone() -> None:
    adb = Adb(ADB, SERIAL)
    assert (SERIAL, "device") in await adb.devices()
    assert (await adb.screencap_png()).startswith(b"\x89PNG\r\n\x1a\n")
    assert "<hierarchy" in await adb.dump_ui_xml()
    assert (await adb.getprop("ro.build.version.sdk")).isdigit()
    packages = await adb.list_packages(third_party_only=False)
    assert any(package.startswith("com.android.") for package in packages), packages


async def test_the_servers_collect_and_press_home() -> None:
    state = MobileServerState(Adb(ADB, SERIAL))
    async with (
        Client(create_data_collector_server(state)) as data,
        Client(create_executor_server(state)) as action,
    ):
        shot = (await data.call_tool("capture_screenshot", {})).content[0].text
        assert shot.startswith("data:image/png;base64,iVBORw0KGgo")
        info = _data(await data.call_tool("get_device_info", {}))
        assert info["device_info"]["sdk_version"].isdigit()
        await action.call_tool("press_key", {"key_code": "KEYCODE_HOME"})
        controls = _data(await data.call_tool("get_app_window_controls_target_info", {}))
        assert isinstance(controls, list) and controls  # a launcher always shows something to tap


async def test_the_phone_registers_as_a_mobile_device(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    options = ClientOptions(
        client_id="phone",
        platform="mobile",
        workspace=tmp_path / "ws",
        config_dir=tmp_path / "cfg",
        serial=SERIAL,
        adb_path=ADB,
    )
    device = build_device_client(options)
    try:
        await probe_device(device)
        info = device.describe(DeviceInfoProvider().collect_system_info("phone"))
        assert info.platform == "mobile"
        assert info.supported_features[:3] == ["mobile", "android", "touch"]
    finally:
        await device.aclose()


# Every character the device shell would act on if the adb layer quoted it wrong.
TRICKY = """it's "quoted"; a & b $(id) `id` | c > d"""


@pytest.mark.skipif(
    os.environ.get(TYPE_TEST_ENV) != "1",
    reason=f"types into the phone's focused text field: set {TYPE_TEST_ENV}=1 with a harmless field focused",
)
async def test_typed_shell_characters_arrive_as_written() -> None:
    """Open a harmless text field on the phone first (a new note, a search box) and leave it focused."""
    adb = Adb(ADB, SERIAL)
    before = focused_text(await adb.dump_ui_xml())
    assert before is not None, "focus a text field on the phone first"
    await adb.input_text(TRICKY)
    try:
        assert TRICKY in (focused_text(await adb.dump_ui_xml()) or "")
    finally:
        await adb.keyevent("KEYCODE_DEL", len(TRICKY))


def focused_text(xml: str) -> str | None:
    """The text of the focused editable node of a uiautomator dump (None when nothing is focused)."""
    for node in ElementTree.fromstring(xml).iter("node"):
        if node.get("focused") == "true" and "EditText" in (node.get("class") or ""):
            return node.get("text") or ""
    return None
