"""The "Linux Bash MCP Server" (reference BashExecutor) and :func:`serve` to run any of our servers.

Nothing starts at import: :func:`create_bash_server` builds the server, :func:`serve` runs it over
stdio or streamable HTTP. The policy (and the one-time bubblewrap probe) is created on first use.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, StarweaveError
from starweave.tools.sandbox.choice import select_sandbox
from starweave.tools.servers.http_access import HttpAccess, guarded_app, uvicorn_server
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.session import ShellSession

BASH_INSTRUCTIONS = (
    "Runs command lines with bash on this Linux machine, inside a sandbox: everything bash offers "
    "works (pipes, variables, loops, $(...), here-documents, find -exec, xargs, python3 -c, scripts). "
    "Files may be written only inside the workspace and the command's private /tmp; the rest of the "
    "system is read-only, secrets are hidden, and there is no network unless it was allowed. The "
    "working directory carries over from one call to the next, as in a terminal. Standard input is "
    "empty: interactive programs (less, vi, a prompt) cannot be answered."
)
SYSTEM_INFO_COMMANDS = {"uname": "uname -a", "uptime": "uptime", "memory": "free -h", "disk": "df -h"}


class SessionHolder:
    """Creates the :class:`ShellSession` on first use, after choosing the sandbox (the probes are
    cached per process, and the programs that start a server check the sandbox at start). One
    server is one shell: its working directory carries over between calls."""

    def __init__(self, shell: ShellConfig) -> None:
        self.shell = shell
        self._session: ShellSession | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> ShellSession:
        """The session; raises SandboxUnavailable (a ConfigError) when the required sandbox does not
        work here, and ConfigError for an unusable workspace."""
        async with self._lock:
            if self._session is None:
                choice = await select_sandbox(self.shell)
                self._session = await asyncio.to_thread(ShellSession, self.shell, sandbox=choice.kind)
            return self._session


def create_bash_server(shell: ShellConfig) -> MCPServer:
    """Build the "Linux Bash MCP Server" with ``execute_command`` and ``get_system_info``."""
    srv = MCPServer("Linux Bash MCP Server", instructions=BASH_INSTRUCTIONS, log_level="WARNING")
    holder = SessionHolder(shell)

    @srv.tool()
    async def execute_command(
        command: Annotated[
            str,
            Field(
                description='The bash command line to run, e.g. "ls -la | sort -k5 -n | tail -3" or '
                '"for f in *.txt; do wc -l "$f"; done".'
            ),
        ],
        timeout: Annotated[  # noqa: ASYNC109 (the reference tool signature)
            int, Field(description="Seconds before the command is killed (capped by the server's maximum).")
        ] = 30,
        cwd: Annotated[
            str | None,
            Field(
                description="Working directory inside the workspace (relative or absolute); "
                "default: where the previous command ended (the workspace at first)."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Execute a shell command line and return its exit code and output.

        Returns {"success": exit_code == 0, "exit_code", "stdout", "stderr"} (plus "truncated": true when
        output was cut, and "cwd" when the command ended in another folder, where the next command
        starts), or {"success": false, "error": "..."} when it could not run or timed out ("Timeout
        after Ns."; then "exit_code" is null and "stdout"/"stderr" hold what it printed before it was
        killed). Exit code 127 means the command was not found, 126 not executable, 128+n killed by
        signal n.
        """
        try:
            session = await holder.get()
            return await run_command(command, session=session, timeout=timeout, cwd=cwd)
        except StarweaveError as exc:
            return {"success": False, "error": str(exc)}

    @srv.tool()
    async def get_system_info() -> dict[str, Any]:
        """Describe this machine: kernel (uname -a), uptime, memory (free -h) and disk usage (df -h).

        Returns {"uname", "uptime", "memory", "disk"}; an entry that could not be read is "Error: ...".
        """
        try:
            session = await holder.get()
        except StarweaveError as exc:
            return {key: f"Error: {exc}" for key in SYSTEM_INFO_COMMANDS}
        info: dict[str, Any] = {}
        for key, command in SYSTEM_INFO_COMMANDS.items():
            result = await run_command(
                command, session=session, timeout=session.config.timeout, cwd=session.workspace
            )
            if result.get("success"):
                info[key] = str(result["stdout"]).strip()
            else:
                info[key] = f"Error: {result.get('error') or str(result.get('stderr', '')).strip()}"
        return info

    return srv


async def serve(
    server: MCPServer,
    transport: str,
    host: str = "127.0.0.1",
    port: int = 8010,
    access: HttpAccess | None = None,
) -> None:
    """Run ``server`` until cancelled: ``stdio``, or ``http``/``streamable-http`` at
    http://host:port/mcp, guarded by ``access`` (see ``starweave.tools.servers.http_access``)."""
    if transport == "stdio":
        await server.run_stdio_async()
    elif transport in ("http", "streamable-http", "streamable_http"):
        app = guarded_app(server, host, access or HttpAccess())
        await uvicorn_server(app, host, port).serve()
    else:
        raise ConfigError(f"unknown MCP transport {transport!r}; use 'stdio' or 'http'")
