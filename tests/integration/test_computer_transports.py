"""Real stdio and streamable-HTTP MCP servers, configured through an mcp.yaml and load_config.

One stdio server (a script run with this Python) and one HTTP server (uvicorn on a free loopback
port) are started once for the module; commands reach them through ComputerManager, CommandRouter
and LocalCommandDispatcher exactly as a session would send them.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
import uvicorn
from mcp.server.mcpserver import MCPServer

from starweave.commands import Command, ResultStatus
from starweave.commands.local import LocalCommandDispatcher
from starweave.config.loader import load_config
from starweave.config.models import StarweaveConfig
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager

pytestmark = pytest.mark.asyncio(loop_scope="module")

STDIO_SERVER = textwrap.dedent(
    '''
    import asyncio
    import os
    import time

    from mcp.server.mcpserver import MCPServer

    srv = MCPServer("EchoStdio", log_level="WARNING")

    @srv.tool()
    async def greet(name: str) -> str:
        """Greet someone, naming the greeting from the environment and the working directory."""
        return f"{os.environ.get('GREETING', '?')} {name} from {os.getcwd()}"

    @srv.tool()
    async def echo(text: str) -> str:
        """Echo over stdio."""
        return text

    @srv.tool()
    async def fail_soft(path: str) -> dict:
        """Report a failure in the result instead of raising."""
        return {"success": False, "error": f"cannot open {path}", "exit_code": 2}

    @srv.tool()
    def block(seconds: float) -> str:
        """A blocking (sync) tool: the SDK runs it in a worker thread."""
        time.sleep(seconds)
        return "done"

    if __name__ == "__main__":
        srv.run("stdio")
    '''
)

MCP_YAML = textwrap.dedent(
    """
    LinuxAgent:
      default:
        data_collection:
          - namespace: WebCollector
            type: http
            host: 127.0.0.1
            port: ${HTTP_PORT}
            path: /collector/mcp
        action:
          - namespace: EchoStdio
            type: stdio
            command: ${PYTHON}
            start_args: ["${SERVER_SCRIPT}"]
            env:
              GREETING: Hello
            cwd: ${WORKDIR}
          - namespace: WebExecutor
            type: http
            host: 127.0.0.1
            port: ${HTTP_PORT}
    DupAgent:
      default:
        action:
          - namespace: EchoStdio
            type: stdio
            command: ${PYTHON}
            start_args: ["${SERVER_SCRIPT}"]
            env:
              GREETING: Hello
            cwd: ${WORKDIR}
          - namespace: WebEcho
            type: http
            host: 127.0.0.1
            port: ${HTTP_PORT}
            path: /echo/mcp
    BadAgent:
      default:
        action:
          - namespace: Missing
            type: stdio
            command: starweave-no-such-mcp-server
    """
)


def web_app() -> object:
    """One Starlette app serving three MCP servers: /mcp, /collector/mcp and /echo/mcp."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    collector = MCPServer("WebCollector", log_level="WARNING")

    @collector.tool()
    async def status() -> dict:
        """Read-only device status."""
        return {"online": True, "load": 0.5}

    web = MCPServer("Web", log_level="WARNING")

    @web.tool()
    async def web_echo(text: str, times: int = 1) -> str:
        """Echo over HTTP."""
        return text * times

    dup = MCPServer("WebEcho", log_level="WARNING")

    @dup.tool()
    async def echo(text: str) -> str:
        """An echo that collides with the stdio server's."""
        return text

    collector_http = collector.streamable_http_app()
    web_http = web.streamable_http_app()
    dup_http = dup.streamable_http_app()

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: object) -> AsyncIterator[None]:
        async with web.session_manager.run(), dup.session_manager.run(), collector.session_manager.run():
            yield

    return Starlette(
        routes=[
            Mount("/echo", app=dup_http),
            Mount("/collector", app=collector_http),
            Mount("/", app=web_http),
        ],
        lifespan=lifespan,
    )


@dataclass
class Device:
    config: StarweaveConfig
    computers: ComputerManager
    router: CommandRouter
    workdir: Path


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def http_port() -> AsyncIterator[int]:
    server = uvicorn.Server(uvicorn.Config(web_app(), host="127.0.0.1", port=0, log_level="warning"))  # type: ignore[arg-type]
    task = asyncio.create_task(server.serve())
    deadline = time.monotonic() + 30.0  # generous: only a failing start waits this long
    while not (server.started or task.done()):
        assert time.monotonic() < deadline, "uvicorn did not start"
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    yield port
    server.should_exit = True
    await asyncio.wait_for(task, 10)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def device(http_port: int, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Device]:
    root = tmp_path_factory.mktemp("device")
    script = root / "echo_server.py"
    script.write_text(STDIO_SERVER)
    workdir = root / "work"
    workdir.mkdir()
    (root / "config" / "ufo").mkdir(parents=True)
    (root / "config" / "ufo" / "mcp.yaml").write_text(MCP_YAML)
    env = {
        "PYTHON": sys.executable,
        "SERVER_SCRIPT": str(script),
        "WORKDIR": str(workdir),
        "HTTP_PORT": str(http_port),
    }
    config = load_config(root / "config", env=env)
    computers = ComputerManager(config.mcp, MCPServerManager(config.system.shell), tool_timeout=1.5)
    yield Device(config, computers, CommandRouter(computers), workdir)
    await computers.aclose()


def action(tool: str, **params: object) -> Command:
    return Command(tool_name=tool, tool_type="action", parameters=params)


async def test_yaml_was_loaded_as_typed_config(device: Device, http_port: int) -> None:
    servers = device.config.mcp_servers("LinuxAgent")
    assert servers is not None
    stdio = servers.action[0]
    assert (stdio.type, stdio.command, stdio.env, stdio.cwd) == (
        "stdio",
        sys.executable,
        {"GREETING": "Hello"},
        str(device.workdir),
    )
    assert (servers.data_collection[0].port, servers.data_collection[0].path) == (http_port, "/collector/mcp")
    assert servers.action[1].path == "/mcp"  # the default path


async def test_commands_reach_stdio_and_http_servers(device: Device) -> None:
    commands = [
        action("greet", name="Ada"),
        action("web_echo", text="ab", times=2),
        Command(tool_name="status", tool_type="data_collection", parameters={}),
    ]
    results = await device.router.execute("LinuxAgent", None, None, commands)
    assert [r.status for r in results] == [ResultStatus.SUCCESS] * 3
    assert results[0].result == f"Hello Ada from {device.workdir}"  # env merged, cwd applied
    assert (results[0].namespace, results[1].namespace, results[2].namespace) == (
        "EchoStdio",
        "WebExecutor",
        "WebCollector",
    )
    assert results[1].result == "abab"
    assert results[2].result == {"online": True, "load": 0.5}


async def test_action_tools_hide_the_data_collection_server(device: Device) -> None:
    computer = await device.computers.get_or_create("LinuxAgent")
    names = {tool["tool_name"] for tool in computer.action_tools()}
    assert {"greet", "echo", "fail_soft", "block", "web_echo"} <= names
    assert "status" not in names


async def test_early_exit_marks_the_rest_skipped(device: Device) -> None:
    commands = [
        action("echo", text="1"),
        action("fail_soft", path="/nope"),
        action("echo", text="3"),
        action("web_echo", text="4"),
    ]
    results = await device.router.execute("LinuxAgent", None, None, commands)
    assert [r.status for r in results] == [
        ResultStatus.SUCCESS,
        ResultStatus.FAILURE,
        ResultStatus.SKIPPED,
        ResultStatus.SKIPPED,
    ]
    assert results[1].error == "cannot open /nope"
    assert results[1].result == {"success": False, "error": "cannot open /nope", "exit_code": 2}


async def test_timeout_over_stdio_then_the_session_still_works(device: Device) -> None:
    results = await device.router.execute("LinuxAgent", None, None, [action("block", seconds=2.5)])
    assert results[0].status == ResultStatus.FAILURE
    assert results[0].error == "Tool execution timed out after 1.5s"
    [after] = await device.router.execute("LinuxAgent", None, None, [action("echo", text="alive")])
    assert (after.status, after.result) == (ResultStatus.SUCCESS, "alive")


async def test_missing_tool_and_bad_arguments(device: Device) -> None:
    results = await device.router.execute(
        "LinuxAgent", None, None, [action("click_input", x=1), action("web_echo", text=3)], early_exit=False
    )
    assert [r.status for r in results] == [ResultStatus.FAILURE, ResultStatus.FAILURE]
    assert "No action tool named 'click_input'" in (results[0].error or "")
    assert "'web_echo'" in (results[0].error or "")  # the available tools are listed
    assert "argument 'text' must be string, got int 3" in (results[1].error or "")


async def test_duplicate_tool_names_across_transports(device: Device) -> None:
    results = await device.router.execute("DupAgent", None, None, [action("echo", text="x")])
    assert results[0].status == ResultStatus.FAILURE
    assert "action tool 'echo' of server 'WebEcho' is also offered by server 'EchoStdio'" in (
        results[0].error or ""
    )


async def test_server_that_fails_to_start(device: Device) -> None:
    results = await device.router.execute("BadAgent", None, None, [action("anything"), action("else")])
    assert [r.status for r in results] == [ResultStatus.FAILURE, ResultStatus.FAILURE]
    error = results[0].error or ""
    assert "stdio server 'Missing' (command 'starweave-no-such-mcp-server') failed to start" in error
    assert "No such file or directory" in error


async def test_local_dispatcher_on_real_transports(device: Device) -> None:
    dispatcher = LocalCommandDispatcher(device.router, agent_name="LinuxAgent")
    commands = [action("greet", name="Linus"), action("web_echo", text="z")]
    results = await dispatcher.execute_commands(commands)
    assert [r.result for r in results] == [f"Hello Linus from {device.workdir}", "z"]
    assert [r.call_id for r in results] == [c.call_id for c in commands]
    dispatcher.agent_name = "UnknownAgent"
    [failed] = await dispatcher.execute_commands([action("greet", name="x")])
    assert (
        failed.status == ResultStatus.FAILURE
        and "configured agents: ['BadAgent', 'DupAgent', 'LinuxAgent']" in (failed.error or "")
    )
