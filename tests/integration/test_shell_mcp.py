"""The Linux Bash MCP Server through real MCP clients (in-process, stdio and streamable HTTP): bash
in the sandbox, and one working directory per server that carries over between calls."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from starweave.config.models import ShellConfig
from starweave.tools.servers.shell import create_bash_server

SERVE_CODE = (
    "import asyncio, sys\n"
    "from starweave.config.models import ShellConfig\n"
    "from starweave.tools.servers.shell import create_bash_server, serve\n"
    "srv = create_bash_server(ShellConfig(workspace=sys.argv[1]))\n"
    "asyncio.run(serve(srv, sys.argv[2], port=int(sys.argv[3])))\n"
)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def _exercise(client: Client, ws: Path) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"execute_command", "get_system_info"}
    schema = tools["execute_command"].input_schema
    assert schema["required"] == ["command"] and "description" in schema["properties"]["command"]
    ran = _data(
        await client.call_tool("execute_command", {"command": "echo hi > a.txt && cat a.txt | wc -c"})
    )
    assert ran == {"success": True, "exit_code": 0, "stdout": "3\n", "stderr": ""}
    assert (ws / "a.txt").read_text() == "hi\n"
    # The sandbox (auto: bubblewrap here, else Landlock) masks the secrets; nothing refuses the line.
    shadow = _data(await client.call_tool("execute_command", {"command": "cat /etc/shadow | wc -c"}))
    assert shadow["exit_code"] == 0 and shadow["stdout"] == "0\n", shadow
    # One server is one shell: the folder a command moved to is where the next one starts.
    real = await asyncio.to_thread(os.path.realpath, ws)
    moved = _data(await client.call_tool("execute_command", {"command": "mkdir -p sub/deep && cd sub/deep"}))
    assert moved["success"] and moved["cwd"] == f"{real}/sub/deep", moved
    here = _data(await client.call_tool("execute_command", {"command": "pwd; X=$(ls ../..); echo $X"}))
    assert here["stdout"] == f"{real}/sub/deep\na.txt sub\n", here
    once = _data(await client.call_tool("execute_command", {"command": "pwd", "cwd": "sub"}))
    assert once["stdout"] == f"{real}/sub\n"
    back = _data(await client.call_tool("execute_command", {"command": "pwd; cd /etc"}))
    assert back["stdout"] == f"{real}/sub/deep\n" and "outside the workspace" in back["note"]
    assert _data(await client.call_tool("execute_command", {"command": "cd ../.."}))["cwd"] == real


async def test_in_process_client(tmp_path: Path) -> None:
    server = create_bash_server(ShellConfig(workspace=str(tmp_path)))
    async with Client(server) as client:
        await _exercise(client, tmp_path)
        in_sub = _data(
            await client.call_tool("execute_command", {"command": "pwd", "cwd": "sub", "timeout": 5})
        )
        assert in_sub["stdout"].strip() == str(tmp_path / "sub")
        slow = _data(await client.call_tool("execute_command", {"command": "sleep 5", "timeout": 1}))
        assert slow == {
            "success": False,
            "error": "Timeout after 1s.",
            "exit_code": None,
            "stdout": "",
            "stderr": "",
        }
        info = _data(await client.call_tool("get_system_info", {}))
        assert set(info) == {"uname", "uptime", "memory", "disk"}
        assert info["uname"].startswith("Linux") and "Mem" in info["memory"] and "Filesystem" in info["disk"]


async def test_unusable_config_is_a_clear_error_not_an_exception() -> None:
    server = create_bash_server(ShellConfig(workspace="relative/ws"))
    async with Client(server) as client:
        result = _data(await client.call_tool("execute_command", {"command": "ls"}))
    assert result["success"] is False and "SHELL.WORKSPACE" in result["error"]


async def test_stdio_transport(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-c", SERVE_CODE, str(tmp_path), "stdio", "0"]
    )
    async with Client(params) as client:
        await _exercise(client, tmp_path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_for_port(port: int, proc: asyncio.subprocess.Process, deadline: float) -> None:
    while time.monotonic() < deadline:
        assert proc.returncode is None, "the HTTP server exited early"
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.2)
    raise AssertionError(f"the HTTP server did not listen on {port}")


async def test_streamable_http_transport(tmp_path: Path) -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SERVE_CODE,
        str(tmp_path),
        "http",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await _wait_for_port(port, proc, time.monotonic() + 30)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await _exercise(client, tmp_path)
    finally:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
