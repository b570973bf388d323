"""``starweave client --platform``: the kinds the client serves, their servers and what they announce."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.client.device_info import DeviceInfoProvider, SystemProbe
from starweave.client.runner import (
    CLIENT_PLATFORMS,
    ClientOptions,
    build_device_client,
    display_problem,
    prepare_platform,
)
from starweave.config import load_config
from starweave.errors import ConfigError


def test_a_linux_desktop_needs_an_x11_display() -> None:
    assert display_problem("linux-desktop", {"DISPLAY": ":9"}, "linux") == ""
    missing = display_problem("linux-desktop", {}, "linux")
    assert missing.startswith("--platform linux-desktop needs a graphical session, but DISPLAY is not set")
    assert "xvfb-run" in missing and "\n" not in missing
    wayland = display_problem("linux-desktop", {"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert "WAYLAND_DISPLAY alone is not enough" in wayland
    assert display_problem("linux-desktop", {"DISPLAY": ":0"}, "darwin") == (
        "--platform linux-desktop runs on Linux (X11) only"
    )


def test_windows_runs_on_windows_only_and_needs_no_display_there() -> None:
    assert display_problem("windows", {}, "win32") == ""
    assert "runs on Windows only" in display_problem("windows", {"DISPLAY": ":0"}, "linux")


def test_a_desktop_gets_the_host_and_app_agent_servers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "ufo").mkdir()
    (tmp_path / "ufo" / "mcp.yaml").write_text(
        "LinuxAgent:\n  default:\n    action:\n      - {namespace: BashExecutor, type: local}\n"
    )
    config = load_config(tmp_path, env={})
    assert "HostAgent" not in config.mcp  # written for the LinuxAgent alone
    monkeypatch.setenv("DISPLAY", ":77")
    kind, closers = prepare_platform("linux-desktop", config)
    assert kind.name == "linux-desktop" and len(closers) == 1
    host = config.mcp["HostAgent"]["default"]
    assert [s.namespace for s in host.action] == ["HostUIExecutor"]
    assert [s.namespace for s in config.mcp["AppAgent"]["mousepad"].action] == [
        "AppUIExecutor",
        "TextEditorExecutor",
    ]


@pytest.mark.parametrize(
    ("platform", "message"),
    [
        (
            # A known kind without a prepare function (every kind has one now: the phone's removed).
            "mobile",
            "--platform mobile (Android phone over adb) is not available in this client yet; use one of "
            "linux, darwin, linux-desktop, windows",
        ),
        (
            "toaster",
            "unknown device platform 'toaster'; use one of linux, darwin, linux-desktop, windows, mobile",
        ),
    ],
)
def test_platforms_the_client_cannot_serve(
    platform: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(CLIENT_PLATFORMS, "mobile")
    with pytest.raises(ConfigError) as caught:
        prepare_platform(platform, load_config(env={}))
    assert str(caught.value) == message


def test_the_phone_options_go_with_the_mobile_platform_only() -> None:
    options = ClientOptions(platform="linux", serial="emulator-5554")
    with pytest.raises(ConfigError, match=r"^--serial and --adb-path go with --platform mobile$"):
        prepare_platform("linux", load_config(env={}), options)


async def test_the_device_registers_as_its_kind_with_its_capabilities(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", ":77")
    (tmp_path / "cfg").mkdir()
    device = build_device_client(
        ClientOptions(
            client_id="desk", platform="linux-desktop", workspace=tmp_path / "ws", config_dir=tmp_path / "cfg"
        )
    )
    try:
        probe = SystemProbe(system=lambda: "Linux", route_ip=lambda: "10.0.0.5")
        info = device.describe(DeviceInfoProvider(probe).collect_system_info("desk"))
        assert device.platform == info.platform == "linux-desktop"
        assert info.supported_features[:3] == ["linux", "desktop", "gui"]
        assert info.custom_metadata["os_name"] == "linux"
    finally:
        await device.aclose()
