"""MCPRegistry and MCPServerManager with real in-process, stdio and HTTP endpoints."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
from helpers.tools_testkit import counter_server, local, shell_server
from mcp.server.mcpserver import MCPServer

from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.errors import ToolError
from starweave.tools import MCPRegistry, MCPServerManager, default_registry, register_local_server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_registry_register_get_and_names() -> None:
    reg = MCPRegistry()
    reg.register_factory("Shell", shell_server)

    @reg.register("Counter")
    def make_counter(shell: ShellConfig) -> MCPServer:
        return counter_server(shell)

    assert reg.get("Shell") is shell_server
    assert reg.get("Counter") is make_counter
    assert reg.names() == ["Counter", "Shell"]
    assert "Shell" in reg and "Nope" not in reg


def test_registry_unknown_name_lists_registered() -> None:
    reg = MCPRegistry()
    reg.register_factory("Shell", shell_server)
    with pytest.raises(ToolError, match=r"No MCP server found for name 'Missing'; registered: \['Shell'\]"):
        reg.get("Missing")


def test_registry_refuses_silent_replacement() -> None:
    reg = MCPRegistry()
    reg.register_factory("Shell", shell_server)
    reg.register_factory("Shell", shell_server)  # the same factory again is harmless
    with pytest.raises(ToolError, match="already registered as 'Shell'"):
        reg.register_factory("Shell", counter_server)
    reg.register_factory("Shell", counter_server, replace=True)
    assert reg.get("Shell") is counter_server
    reg.unregister("Shell")
    assert reg.names() == []


def test_registry_autoloads_modules_once() -> None:
    # 'json' stands in for a servers package: importing it must not fail or register anything.
    reg = MCPRegistry(autoload=("json",))
    assert reg.names() == []
    broken = MCPRegistry(autoload=("starweave_no_such_module_xyz",))
    with pytest.raises(ModuleNotFoundError):
        broken.names()


def test_registry_autoload_calls_the_register_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sw_autoload_probe.py").write_text(
        "CALLS = []\n\ndef register_builtin_servers():\n    CALLS.append(1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = MCPRegistry(autoload=("sw_autoload_probe",))
    reg.names()
    reg.names()
    import sw_autoload_probe  # type: ignore[import-not-found]

    assert sw_autoload_probe.CALLS == [1]  # imported and hooked exactly once


def test_default_registry_decorator() -> None:
    name = "TestOnlyDefaultRegistryServer"

    @register_local_server(name)
    def factory(shell: ShellConfig) -> MCPServer:
        return shell_server(shell)

    try:
        assert default_registry.get(name) is factory
    finally:
        default_registry.unregister(name)


async def test_local_server_is_cached_and_called(server_manager: MCPServerManager, tmp_path: Path) -> None:
    first = await server_manager.get_or_create(local("Shell"))
    second = await server_manager.get_or_create(local("Shell"))
    assert first is second and first.started
    names = {tool.name for tool in await first.list_tools()}
    assert {"echo", "add", "run", "sleep", "explode"} <= names
    result = await first.call_tool("run", {"command": "ls"})
    assert not result.is_error
    assert str(tmp_path) in result.content[0].text  # the factory received the device's ShellConfig


async def test_reset_servers_are_per_process_and_restart_fresh(server_manager: MCPServerManager) -> None:
    cfg = local("Counter", reset=True)
    a = await server_manager.get_or_create(cfg, "a.exe")
    b = await server_manager.get_or_create(cfg, "b.exe")
    assert a is not b
    await a.call_tool("count", {})
    assert (await a.call_tool("count", {})).structured_content == {"result": 2}
    fresh = await server_manager.restart(cfg, "a.exe")
    assert fresh is not a and not a.started
    assert (await fresh.call_tool("count", {})).structured_content == {"result": 1}


async def test_reset_closes_every_session(server_manager: MCPServerManager) -> None:
    handle = await server_manager.get_or_create(local("Shell"))
    await server_manager.reset()
    assert not handle.started and server_manager.servers == {}
    with pytest.raises(ToolError, match="not connected"):
        await handle.call_tool("echo", {"text": "x"})
    again = await server_manager.get_or_create(local("Shell"))
    assert again is not handle and again.started


async def test_unknown_local_server(server_manager: MCPServerManager) -> None:
    with pytest.raises(ToolError, match="No MCP server found for name 'Ghost'"):
        await server_manager.get_or_create(local("Ghost"))


async def test_local_factory_failure_names_the_server(shell_config: ShellConfig) -> None:
    reg = MCPRegistry()

    def broken(shell: ShellConfig) -> MCPServer:
        raise RuntimeError("workspace missing")

    reg.register_factory("Broken", broken)
    manager = MCPServerManager(shell_config, registry=reg)
    with pytest.raises(
        ToolError, match="local server 'Broken' failed to start: RuntimeError: workspace missing"
    ):
        await manager.get_or_create(local("Broken"))


async def test_stdio_command_not_found(server_manager: MCPServerManager) -> None:
    cfg = McpServerConfig(namespace="Nope", type="stdio", command="starweave-no-such-command")
    with pytest.raises(
        ToolError, match=r"stdio server 'Nope' \(command 'starweave-no-such-command'\) failed to start"
    ):
        await server_manager.get_or_create(cfg)
    assert server_manager.servers == {}


async def test_stdio_server_crashing_at_start_quotes_its_stderr(
    server_manager: MCPServerManager, tmp_path: Path
) -> None:
    script = tmp_path / "crash.py"
    script.write_text("import sys\nprint('cannot read settings.toml', file=sys.stderr)\nsys.exit(3)\n")
    cfg = McpServerConfig(namespace="Crash", type="stdio", command=sys.executable, start_args=[str(script)])
    with pytest.raises(ToolError) as info:
        await server_manager.get_or_create(cfg)
    message = str(info.value)
    assert "stdio server 'Crash'" in message and "failed to start" in message
    assert "cannot read settings.toml" in message


async def test_stdio_server_that_never_answers_times_out(shell_config: ShellConfig, tmp_path: Path) -> None:
    script = tmp_path / "mute.py"
    script.write_text("import time\ntime.sleep(30)\n")
    manager = MCPServerManager(shell_config, registry=MCPRegistry(), startup_timeout=0.5)
    cfg = McpServerConfig(namespace="Mute", type="stdio", command=sys.executable, start_args=[str(script)])
    with pytest.raises(ToolError, match=r"stdio server 'Mute' .* failed to start: no answer within 0.5s"):
        await manager.get_or_create(cfg)


async def test_http_server_not_listening(server_manager: MCPServerManager) -> None:
    port = free_port()
    cfg = McpServerConfig(namespace="Remote", type="http", host="127.0.0.1", port=port)
    with pytest.raises(
        ToolError, match=rf"http server 'Remote' \(http://127.0.0.1:{port}/mcp\) failed to start"
    ):
        await server_manager.get_or_create(cfg)


async def test_create_servers_from_config_starts_shared_servers(server_manager: MCPServerManager) -> None:
    config = {
        "A": {"default": McpServerSet(data_collection=[local("Collector")], action=[local("Shell")])},
        "B": {"default": McpServerSet(action=[local("Shell"), local("Counter", reset=True)])},
    }
    handles = await server_manager.create_servers_from_config(config)
    assert sorted(h.namespace for h in handles) == ["Collector", "Shell"]  # deduplicated, reset ones later
    assert len(server_manager.servers) == 2
    config["C"] = {"default": McpServerSet(action=[local("Ghost"), local("Phantom")])}
    with pytest.raises(ToolError, match=r"'Ghost'.*'Phantom'"):
        await server_manager.create_servers_from_config(config)
