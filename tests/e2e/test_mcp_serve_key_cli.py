"""``starweave mcp serve files --transport http --key KEY``: the key given on the command line is
required on every request, and a client configured with the http entry sends it."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from starweave.config.models import McpServerConfig
from starweave.tools.mcp_manager import MCPServerManager

KEY = "cli-key-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def listed_tools(port: int) -> list[str]:
    manager = MCPServerManager()
    entry = McpServerConfig(
        namespace="FileExecutor", type="http", host="127.0.0.1", port=port, api_key_env="FILES_KEY"
    )
    try:
        handle = await manager.get_or_create(entry)
        return sorted(t.name for t in await handle.list_tools())
    finally:
        await manager.aclose()


def test_the_key_is_required_and_sent_by_configured_clients(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    args = ["mcp", "serve", "files", "--transport", "http", "--port", str(port), "-w", "ws", "--key", KEY]
    proc = subprocess.Popen(
        [sys.executable, "-m", "starweave.cli", *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 60
        while True:  # poll until the server answers
            assert proc.poll() is None, proc.communicate()[1]
            try:
                unkeyed = httpx.get(url, timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        assert unkeyed.status_code == 401
        monkeypatch.setenv("FILES_KEY", KEY)
        assert "read_file" in asyncio.run(listed_tools(port))
    finally:
        proc.terminate()
        _, errors = proc.communicate(timeout=20)
    assert KEY not in errors
