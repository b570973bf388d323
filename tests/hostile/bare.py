"""The ``bare`` mode: an agent with no defence at all, implemented by the harness itself (bash -c with
the environment Starweave used to give commands, plain file access). It is not Starweave: it exists to
show that every case does harm when nothing stops it (``HOSTILE_MODES=bare``), so that no case
passes only because it is broken."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from typing import Any

CAP = 65536


@dataclass
class BareResult:
    """Shaped like the MCP client's CallToolResult, as far as the runner reads it."""

    structured_content: dict[str, Any]
    is_error: bool = False
    content: list[Any] = field(default_factory=list)


class BareClient:
    """Runs the four tools without any check, in ``workspace``."""

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace

    async def __aenter__(self) -> BareClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def _path(self, path: str) -> str:
        return os.path.join(self.workspace, path)

    async def call_tool(self, name: str, args: dict[str, Any]) -> BareResult:
        """Do what the tool would do, unchecked."""
        if name == "execute_command":
            return BareResult(await self._run(args))
        if name == "get_system_info":
            return BareResult(await self._run({"command": "uname -a; uptime; env"}))
        return BareResult(await asyncio.to_thread(self._file_tool, name, args))

    def _file_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            if name == "read_file":
                with open(self._path(args["path"]), "rb") as fh:
                    data = fh.read(int(args.get("max_bytes", CAP)))
                return {"success": True, "content": data.decode(errors="replace")}
            if name == "write_file":
                path = self._path(args["path"])
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                with open(path, "a" if args.get("append") else "w") as fh:
                    fh.write(args["content"])
                return {"success": True}
            if name == "list_directory":
                return {"success": True, "entries": sorted(os.listdir(self._path(args.get("path", "."))))}
        except (OSError, ValueError) as exc:
            return {"success": False, "error": str(exc)}
        raise ValueError(f"unknown tool {name}")

    async def _run(self, args: dict[str, Any]) -> dict[str, Any]:
        cwd = self._path(args.get("cwd") or ".")
        # Everything of the parent's environment, HOME the workspace (as Starweave once did).
        env = {**os.environ, "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.workspace}
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            args["command"],
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), float(args.get("timeout", 10)))
        except TimeoutError:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            return {"success": False, "error": "Timeout", "exit_code": None}
        return {
            "success": proc.returncode == 0,
            "exit_code": proc.returncode,
            "stdout": out[:CAP].decode(errors="replace"),
            "stderr": err[:CAP].decode(errors="replace"),
        }
