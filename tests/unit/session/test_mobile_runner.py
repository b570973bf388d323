"""Where --serial and --adb-path go: the session's local mobile servers are built on that device's
state (a registry passed to the MCP manager); stdio is refused, and the options with an http server."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config import load_config
from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig, StarweaveConfig, default_mcp
from starweave.errors import ConfigError
from starweave.session.mobile_runner import MobileOptions, apply_device_settings, check_device_options
from starweave.tools.servers.mobile.state import ENV_ADB_SERIAL


def config_with(*servers: McpServerConfig) -> StarweaveConfig:
    config = StarweaveConfig()
    config.mcp["MobileAgent"] = {
        "default": McpServerSet(data_collection=[servers[0]], action=list(servers[1:]))
    }
    return config


LOCAL = (
    McpServerConfig(namespace="MobileDataCollector", type="local"),
    McpServerConfig(namespace="MobileExecutor", type="local"),
)
HTTP = McpServerConfig(namespace="MobileExecutor", type="http", host="127.0.0.1", port=8021)


def test_local_servers_are_built_on_the_given_phone(tmp_path: Path) -> None:
    adb = tmp_path / "adb"
    adb.write_text("#!/bin/sh\n")
    config = config_with(*LOCAL)
    mobile = MobileOptions(serial="emulator-5554", adb_path=str(adb))
    check_device_options(mobile)
    registry = apply_device_settings(config, mobile)
    assert registry is not None
    assert (registry.state.adb.path, registry.state.adb.serial) == (str(adb), "emulator-5554")
    # The servers the registry builds drive that phone's state, whatever the session's ShellConfig.
    server = registry.get("MobileDataCollector")(ShellConfig.model_validate({}))
    assert server.name == "Mobile Data Collector MCP Server"


def test_nothing_given_uses_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_ADB_SERIAL, "from-env")
    registry = apply_device_settings(config_with(*LOCAL), MobileOptions())
    assert registry is not None and registry.state.adb.serial == "from-env"


def test_a_stdio_mobile_server_is_refused() -> None:
    stdio = McpServerConfig(namespace="MobileExecutor", type="stdio", command="mobile-server")
    with pytest.raises(ConfigError, match=r"^mcp.yaml: the MobileAgent's MobileExecutor cannot be a stdio"):
        apply_device_settings(config_with(LOCAL[0], stdio), MobileOptions())


def test_device_options_with_an_http_server_are_refused() -> None:
    config = config_with(LOCAL[0], HTTP)
    with pytest.raises(
        ConfigError,
        match=r"^--serial/--adb-path cannot reach the http server MobileExecutor at 127.0.0.1:8021",
    ):
        apply_device_settings(config, MobileOptions(serial="emulator-5554"))
    # Without the options an http server is used as it is (its own process drives its phone).
    only_http = config_with(HTTP.model_copy(update={"namespace": "MobileDataCollector"}), HTTP)
    assert apply_device_settings(only_http, MobileOptions()) is None


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
