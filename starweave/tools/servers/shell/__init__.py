"""Linux shell tools: bash inside a sandbox (bubblewrap, Landlock), the confirmation classifier, the
runner and the MCP server.

Public API::

    ShellSession(config, *, sandbox="bwrap"|"landlock"|"none")   workspace, sandbox, working folder
    await run_command(cmd, session=, timeout=, cwd=) -> dict
    dangerous_reason(cmd) -> str | None
    await ensure_sandbox(shell) -> SandboxChoice   (start-up check; SandboxUnavailable if missing)
    create_bash_server(shell) -> MCPServer;  await serve(server, transport, host, port)
"""

from starweave.tools.sandbox.choice import SandboxChoice, ensure_sandbox
from starweave.tools.servers.shell.danger import dangerous_reason
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.server import create_bash_server, serve
from starweave.tools.servers.shell.session import ShellSession

__all__ = [
    "SandboxChoice",
    "ShellSession",
    "create_bash_server",
    "dangerous_reason",
    "ensure_sandbox",
    "run_command",
    "serve",
]
