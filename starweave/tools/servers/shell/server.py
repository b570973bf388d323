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
from starweave.tools.servers.http_access import HttpAccess, guarded_app, uvicorn_server
from starweave.tools.servers.shell.policy import ShellPolicy
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.sandbox import select_sandbox

BASH_INSTRUCTIONS = (
    "Runs shell commands on this Linux machine. Commands are parsed and checked, not given to a shell: "
    "pipes (|), &&, ||, ;, redirections (> >> < 2> 2>&1 &>), globs (* ? [..]) and cd work; $(...), "
    "backticks, $VARS (except $HOME and $PWD), &, here-documents, subshells and if/for/while do not. "
    "Files may be written only inside the workspace; interpreters with inline code (python -c, bash -c) "
    "and interactive programs (less, vi) are refused. A refused command returns 'Blocked: <reason>'."
)
SYSTEM_INFO_COMMANDS = {"uname": "uname -a", "uptime": "uptime", "memory": "free -h", "disk": "df -h"}


class PolicyHolder:
    """Creates the :class:`ShellPolicy` on first use, after choosing the sandbox (the probes are
    cached per process, and the programs that start a server check the sandbox at start)."""

    def __init__(self, shell: ShellConfig) -> None:
        self.shell = shell
        self._policy: ShellPolicy | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> ShellPolicy:
        """The policy; raises SandboxUnavailable (a ConfigError) when the required sandbox does not
        work here, and ConfigError for an unusable workspace."""
        async with self._lock:
            if self._policy is None:
                choice = await select_sandbox(self.shell)
                self._policy = await asyncio.to_thread(ShellPolicy, self.shell, sandbox=choice.kind)
            return self._policy


def create_bash_server(shell: ShellConfig) -> MCPServer:
    """Build the "Linux Bash MCP Server" with ``execute_command`` and ``get_system_info``."""
    srv = MCPServer("Linux Bash MCP Server", instructions=BASH_INSTRUCTIONS, log_level="WARNING")
    holder = PolicyHolder(shell)

    @srv.tool()
    async def execute_command(
        command: Annotated[
            str,
            Field(
                description='The command line to run, e.g. "ls -la | sort -k5 -n | tail -3" or '
                '"mkdir demo && echo hi > demo/a.txt". No $(...), backticks, $VARS or &.'
            ),
        ],
        timeout: Annotated[  # noqa: ASYNC109 (the reference tool signature)
            int, Field(description="Seconds before the command is killed (capped by the server's maximum).")
        ] = 30,
        cwd: Annotated[
            str | None,
            Field(
                description="Working directory inside the workspace (relative or absolute); "
                "default: the workspace."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Execute a shell command line and return its exit code and output.

        Returns {"success": exit_code == 0, "exit_code", "stdout", "stderr"} (plus "truncated": true when
        output was cut), or {"success": false, "error": "..."} when the command was blocked by the
        policy ("Blocked: <reason>") or timed out ("Timeout after Ns."; then "exit_code" is null and
        "stdout"/"stderr" hold what it printed before it was killed). Exit code 127 means the command
        was not found, 126 not executable, 128+n killed by signal n.
        """
        try:
            policy = await holder.get()
            return await run_command(command, policy=policy, timeout=timeout, cwd=cwd)
        except StarweaveError as exc:
            return {"success": False, "error": str(exc)}

    @srv.tool()
    async def get_system_info() -> dict[str, Any]:
        """Describe this machine: kernel (uname -a), uptime, memory (free -h) and disk usage (df -h).

        Returns {"uname", "uptime", "memory", "disk"}; an entry that could not be read is "Error: ...".
        """
        try:
            policy = await holder.get()
        except StarweaveError as exc:
            return {key: f"Error: {exc}" for key in SYSTEM_INFO_COMMANDS}
        info: dict[str, Any] = {}
        for key, command in SYSTEM_INFO_COMMANDS.items():
            result = await run_command(command, policy=policy, timeout=policy.config.timeout)
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
