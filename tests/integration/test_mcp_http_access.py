"""MCP servers served over HTTP: off loopback ("remote" mode, here bound to 127.0.0.1 so that the
tests stay on this machine) every request needs ``Authorization: Bearer KEY`` and a Host/Origin
naming this machine; on loopback (any spelling) Host and Origin are checked too. Clients configured
with an ``http`` entry send the key from the environment."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone

from starweave.config.models import McpServerConfig, ShellConfig
from starweave.errors import ToolError
from starweave.tools.mcp_manager import MCPServerManager
from starweave.tools.servers.files import create_file_server
from starweave.tools.servers.http_access import HttpAccess, guarded_app, http_access, uvicorn_server
from starweave.tools.servers.mobile import serve_mobile

KEY = "s3cret-key-for-tests"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@asynccontextmanager
async def files_server(tmp_path: Path, access: HttpAccess, host: str = "127.0.0.1") -> AsyncIterator[int]:
    """The FileExecutor served as ``mcp serve files`` does, on ``host``; yields its port."""
    server = create_file_server(ShellConfig(workspace=str(tmp_path)))
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, 0))
    sock.listen(16)
    sock.setblocking(False)
    http = uvicorn_server(guarded_app(server, host, access))
    task = asyncio.create_task(http.serve(sockets=[sock]))
    try:
        for _ in range(400):  # poll (up to ~20 s) until it serves
            if http.started or task.done():
                break
            await asyncio.sleep(0.05)
        assert http.started, "the server did not start"
        yield sock.getsockname()[1]
    finally:
        http.should_exit = True
        await asyncio.wait_for(task, 20)
        sock.close()


def entry(port: int, **extra: str) -> McpServerConfig:
    return McpServerConfig(namespace="FileExecutor", type="http", host="127.0.0.1", port=port, **extra)


async def tool_names(config: McpServerConfig) -> list[str]:
    manager = MCPServerManager()
    try:
        handle = await manager.get_or_create(config)
        return sorted(t.name for t in await handle.list_tools())
    finally:
        await manager.aclose()


async def test_remote_mode_needs_the_key_and_this_machines_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STARWEAVE_MCP_KEY", raising=False)
    async with files_server(tmp_path, HttpAccess(key=KEY, remote=True)) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient() as http:
            bearer = {**MCP_HEADERS, "Authorization": f"Bearer {KEY}"}
            assert (await http.post(url, json=INITIALIZE, headers=MCP_HEADERS)).status_code == 401
            wrong = {**MCP_HEADERS, "Authorization": "Bearer s3cret-key-for-tesTS"}
            refused = await http.post(url, json=INITIALIZE, headers=wrong)
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            assert (await http.post(url, json=INITIALIZE, headers=bearer)).status_code == 200
            # The right key from a foreign name (DNS rebinding) or a foreign page is refused too.
            foreign = await http.post(url, json=INITIALIZE, headers={**bearer, "Host": "evil.example"})
            assert foreign.status_code == 421
            page = await http.post(url, json=INITIALIZE, headers={**bearer, "Origin": "http://evil.example"})
            assert page.status_code == 403
            # Every path is guarded, not only /mcp.
            assert (await http.get(f"http://127.0.0.1:{port}/anything")).status_code == 401
        # A client configured with the entry: without a key it cannot start; with it, it lists.
        with pytest.raises(ToolError, match="failed to start") as caught:
            await tool_names(entry(port))
        assert KEY not in str(caught.value)
        # The serving side's variable is not sent to an entry that does not name it (it would
        # reach every http server in mcp.yaml, third parties' included).
        monkeypatch.setenv("STARWEAVE_MCP_KEY", KEY)
        with pytest.raises(ToolError, match="failed to start"):
            await tool_names(entry(port))
        assert "read_file" in await tool_names(entry(port, api_key_env="STARWEAVE_MCP_KEY"))
        monkeypatch.delenv("STARWEAVE_MCP_KEY")
        monkeypatch.setenv("FILES_KEY", KEY)
        assert "read_file" in await tool_names(entry(port, api_key_env="FILES_KEY"))


async def test_loopback_without_a_key_keeps_the_sdks_host_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STARWEAVE_MCP_KEY", raising=False)
    async with files_server(tmp_path, HttpAccess()) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient() as http:
            foreign = await http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "Host": "evil.example"})
            assert foreign.status_code == 421
        assert "read_file" in await tool_names(entry(port))


@pytest.mark.parametrize(
    ("bind", "spellings"),
    [
        ("127.0.0.2", ["127.0.0.2", "localhost", "127.0.0.1"]),
        ("0:0:0:0:0:0:0:1", ["[0:0:0:0:0:0:0:1]", "[::1]", "[::0:1]"]),
        ("::1", ["[::1]", "[0:0:0:0:0:0:0:1]"]),
    ],
)
async def test_every_loopback_spelling_keeps_the_host_and_origin_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bind: str, spellings: list[str]
) -> None:
    """Issue 26: bound to 127.0.0.2 or 0:0:0:0:0:0:0:1 (loopback, so no key needed), a request
    with a foreign Host and Origin reached the tools (the SDK checks only three spellings)."""
    monkeypatch.delenv("STARWEAVE_MCP_KEY", raising=False)
    access = http_access(bind, allow_remote=False, key=None)
    assert not access.remote and not access.key
    async with files_server(tmp_path, access, bind) as port:
        url = f"http://[{bind}]:{port}/mcp" if ":" in bind else f"http://{bind}:{port}/mcp"
        async with httpx.AsyncClient() as http:
            rebound = {**MCP_HEADERS, "Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
            assert (await http.post(url, json=INITIALIZE, headers=rebound)).status_code == 421
            for spelling in spellings:
                here = f"{spelling}:{port}"
                page = {**MCP_HEADERS, "Host": here, "Origin": "http://evil.example"}
                assert (await http.post(url, json=INITIALIZE, headers=page)).status_code == 403
                ok = {**MCP_HEADERS, "Host": here}
                assert (await http.post(url, json=INITIALIZE, headers=ok)).status_code == 200, here
                same = {**ok, "Origin": f"http://{here}"}
                assert (await http.post(url, json=INITIALIZE, headers=same)).status_code == 200, here


def test_an_entry_naming_an_unset_key_variable_is_one_line() -> None:
    with pytest.raises(ToolError) as caught:
        MCPServerManager()._build(entry(8010, api_key_env="STARWEAVE_TEST_UNSET_KEY"))
    assert str(caught.value) == (
        "http server 'FileExecutor' (http://127.0.0.1:8010/mcp): its key variable "
        "STARWEAVE_TEST_UNSET_KEY (api_key_env in mcp.yaml) is not set"
    )


async def test_mobile_servers_guard_health_and_it_names_no_device(android_phone: SimulatedPhone) -> None:
    adb = android_phone.adb_client()
    urls: dict[str, str] = {}
    listening = asyncio.Event()

    def announce(namespace: str, url: str) -> None:
        urls[namespace] = url
        if len(urls) == 2:
            listening.set()

    access = HttpAccess(key=KEY, remote=True)
    task = asyncio.create_task(serve_mobile(adb, "127.0.0.1", 0, 0, announce=announce, access=access))
    try:
        await asyncio.wait_for(listening.wait(), 30)
        health_url = urls["MobileExecutor"].replace("/mcp", "/health")
        async with httpx.AsyncClient() as http:
            for _ in range(400):  # the socket listens already; poll until uvicorn answers
                try:
                    unkeyed = await http.get(health_url)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            assert unkeyed.status_code == 401
            health = await http.get(health_url, headers={"Authorization": f"Bearer {KEY}"})
        assert health.json() == {"status": "healthy", "server": "MobileExecutor"}
        assert adb.path not in health.text and "emulator-5554" not in health.text
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
