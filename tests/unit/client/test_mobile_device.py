"""``starweave client --platform mobile``: the phone's servers bound to the device, the phone checked
with ``adb devices`` before registering, its apps announced (against the simulated phone)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone

from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider, SystemProbe
from starweave.client.mobile_device import MAX_APPS, app_names
from starweave.client.runner import ClientOptions, build_device_client, probe_device, run_device_client
from starweave.errors import ConfigError
from starweave.tools.servers.mobile import MobileRegistry


def phone_options(tmp_path: Path, phone: SimulatedPhone, **fields: str) -> ClientOptions:
    config_dir = tmp_path / "cfg"
    config_dir.mkdir(exist_ok=True)
    values = {"serial": phone.serial, "adb_path": str(phone.adb_path), **fields}
    return ClientOptions(
        client_id="phone", platform="mobile", workspace=tmp_path / "ws", config_dir=config_dir, **values
    )


@pytest.fixture
async def phone_device(tmp_path: Path, android_phone: SimulatedPhone) -> AsyncIterator[DeviceClient]:
    device = build_device_client(phone_options(tmp_path, android_phone))
    yield device
    await device.aclose()


def test_app_names_are_short_unique_and_few() -> None:
    assert app_names(["com.example.notes", "org.other.Notes", "com.whatsapp"]) == ["notes", "whatsapp"]
    assert len(app_names([f"com.example.app{i}" for i in range(40)])) == MAX_APPS


async def test_a_phone_registers_as_mobile_with_its_apps(
    phone_device: DeviceClient, android_phone: SimulatedPhone
) -> None:
    registry = phone_device.mcp_server_manager.registry
    assert isinstance(registry, MobileRegistry) and registry.state.adb.serial == android_phone.serial
    assert phone_device.computer_manager.mcp_config["MobileAgent"]["default"].action[0].namespace == (
        "MobileExecutor"
    )
    await probe_device(phone_device)
    probe = SystemProbe(system=lambda: "Linux", route_ip=lambda: "10.0.0.5")
    info = phone_device.describe(DeviceInfoProvider(probe).collect_system_info("phone"))
    assert info.platform == "mobile"
    assert info.supported_features == ["mobile", "android", "touch", "calculator", "notes"]


async def test_a_phone_adb_does_not_see_is_a_one_line_start_up_error(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    said: list[str] = []
    options = phone_options(tmp_path, android_phone, serial="emulator-9999")
    assert await run_device_client(options, said.append) == 2
    assert said == [
        "starweave client: --platform mobile: adb does not see the phone emulator-9999 "
        f"(attached: {android_phone.serial} (device)); enable USB debugging on the phone and check "
        "`adb devices`"
    ]


async def test_a_detached_phone_without_a_serial_asks_for_one(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    android_phone.set_online(False)
    device = build_device_client(phone_options(tmp_path, android_phone, serial=""))
    try:
        with pytest.raises(ConfigError, match=r"^--platform mobile: no phone is attached; pass --serial"):
            await probe_device(device)
    finally:
        await device.aclose()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"adb_path": "/nowhere/adb"},
            "--adb-path /nowhere/adb: no such file; give the path of the adb program",
        ),
        ({"serial": "bad serial!"}, "--serial: invalid device serial 'bad serial!'"),
    ],
)
async def test_bad_phone_options_are_one_line(
    tmp_path: Path, android_phone: SimulatedPhone, fields: dict[str, str], message: str
) -> None:
    said: list[str] = []
    assert await run_device_client(phone_options(tmp_path, android_phone, **fields), said.append) == 2
    assert len(said) == 1 and said[0].startswith(f"starweave client: {message}")


async def test_a_missing_adb_is_a_one_line_start_up_error(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    not_adb = tmp_path / "adb"
    not_adb.write_text("not a program\n")  # a file, but not executable
    said: list[str] = []
    assert (
        await run_device_client(phone_options(tmp_path, android_phone, adb_path=str(not_adb)), said.append)
        == 2
    )
    assert len(said) == 1 and "is not executable; install the Debian 'adb' package" in said[0]


@pytest.mark.parametrize(
    ("adb_state", "hint"),
    [("unauthorized", "accept the USB-debugging prompt on the phone"), ("offline", "reconnect the phone")],
)
async def test_a_phone_adb_cannot_use_is_named_by_its_state(
    tmp_path: Path, android_phone: SimulatedPhone, adb_state: str, hint: str
) -> None:
    android_phone.update(adb_state=adb_state)
    said: list[str] = []
    assert await run_device_client(phone_options(tmp_path, android_phone, serial=""), said.append) == 2
    assert said == [
        f"starweave client: --platform mobile: the phone {android_phone.serial} is '{adb_state}' in "
        f"`adb devices`; {hint}" + (" (or restart adb: adb kill-server)" if adb_state == "offline" else "")
    ]
