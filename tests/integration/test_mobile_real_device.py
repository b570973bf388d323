"""The mobile stack against a REAL Android phone: the same adb layer, MCP servers and device client the
simulated phone's tests drive, pointed at the phone of ``STARWEAVE_ADB_SERIAL``.

Skipped unless ``STARWEAVE_ADB_SERIAL`` is set and ``adb devices`` lists that phone as ``device``
(USB debugging on, the computer authorised); ``STARWEAVE_ADB_PATH`` picks the adb program (default:
found as ``--adb-path`` finds it). The tests only read the screen, list apps and press HOME: nothing
on the phone changes but the screen shown. See README "Mobile: a real phone".

    STARWEAVE_ADB_SERIAL=R58M12345 .venv/bin/python -m pytest -q tests/integration/test_mobile_real_device.py

(The module also runs against the simulated phone: STARWEAVE_ADB_SERIAL=emulator-5554
STARWEAVE_ADB_PATH=tests/helpers/android_sim/adb STARWEAVE_ANDROID_SIM_DIR=/tmp/sim.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

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

SERIAL = os.environ.get(ENV_ADB_SERIAL, "")
ADB = find_adb(os.environ.get(ENV_ADB_PATH) or None)


def phone_attached(serial: str) -> bool:
    """``adb devices`` lists ``serial`` as a usable device (False when adb is missing)."""
    if not serial:
        return False
    try:
        listed = subprocess.run([ADB, "devices"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any(line.split()[:2] == [serial, "device"] for line in listed.stdout.splitlines()[1:])


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not phone_attached(SERIAL),
        reason=f"no real phone: set {ENV_ADB_SERIAL} to a serial `adb devices` lists as 'device'",
    ),
]


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
