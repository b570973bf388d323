"""Where --serial and --adb-path go: the session's local mobile servers are bound to the device, a
stdio server gets the environment keys the mobile servers read."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config import load_config
from starweave.config.models import McpServerConfig, McpServerSet, StarweaveConfig, default_mcp
from starweave.errors import ConfigError
from starweave.session.mobile_runner import (
    MobileOptions,
    apply_device_settings,
    check_device_options,
    device_environment,
)
from starweave.tools.servers.mobile.state import ENV_ADB_PATH, ENV_ADB_SERIAL, state_for_session


def config_with(*servers: McpServerConfig) -> StarweaveConfig:
    config = StarweaveConfig()
    config.mcp["MobileAgent"] = {
        "default": McpServerSet(data_collection=[servers[0]], action=list(servers[1:]))
    }
    return config


def test_local_servers_are_bound_and_stdio_servers_get_the_environment(tmp_path: Path) -> None:
    adb = tmp_path / "adb"
    adb.write_text("#!/bin/sh\n")
    stdio = McpServerConfig(namespace="MobileExecutor", type="stdio", command="mobile-server")
    config = config_with(McpServerConfig(namespace="MobileDataCollector", type="local"), stdio)
    mobile = MobileOptions(serial="emulator-5554", adb_path=str(adb))
    check_device_options(mobile)
    apply_device_settings(config, mobile)
    state = state_for_session(config.system.shell)
    assert (state.adb.path, state.adb.serial) == (str(adb), "emulator-5554")
    assert stdio.env == {ENV_ADB_SERIAL: "emulator-5554", ENV_ADB_PATH: str(adb)}


def test_nothing_given_leaves_the_servers_their_own_choice() -> None:
    assert device_environment(MobileOptions()) == {}
    stdio = McpServerConfig(namespace="MobileExecutor", type="stdio", command="mobile-server")
    config = config_with(McpServerConfig(namespace="MobileDataCollector", type="local"), stdio)
    apply_device_settings(config, MobileOptions())
    assert stdio.env == {}


@pytest.mark.parametrize(
    ("mobile", "message"),
    [
        (MobileOptions(serial="x y"), "--serial: invalid device serial"),
        (MobileOptions(adb_path="/nowhere/adb"), "no such file"),
    ],
)
def test_bad_device_options_are_config_errors(mobile: MobileOptions, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_device_options(mobile)


def test_the_built_in_servers_are_the_shipped_mcp_yaml_entry() -> None:
    """Without any mcp.yaml (outside the repository) `run --agent mobile` gets the shipped servers."""
    shipped = load_config(Path(__file__).resolve().parents[3] / "config", env={})
    assert default_mcp()["MobileAgent"] == shipped.mcp["MobileAgent"]
    assert StarweaveConfig().mcp_servers("MobileAgent") is not None
