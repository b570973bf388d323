"""Linux shell tools: command-line parser, argv policy, sandboxes (bubblewrap, Landlock), runner and
MCP server.

Public API::

    ShellPolicy(config, *, sandbox="bwrap"|"landlock"|"none")   .evaluate(cmd, cwd), .enforce(...)
    await run_command(cmd, policy=, timeout=, cwd=) -> dict
    dangerous_reason(cmd) -> str | None
    await ensure_sandbox(shell) -> SandboxChoice   (start-up check; SandboxUnavailable if missing)
    create_bash_server(shell) -> MCPServer;  await serve(server, transport, host, port)
"""

from starweave.tools.servers.shell.danger import dangerous_reason
from starweave.tools.servers.shell.policy import PolicyDecision, PreparedCommand, ShellPolicy
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.servers.shell.sandbox import SandboxChoice, ensure_sandbox
from starweave.tools.servers.shell.server import create_bash_server, serve

__all__ = [
    "PolicyDecision",
    "PreparedCommand",
    "SandboxChoice",
    "ShellPolicy",
    "create_bash_server",
    "dangerous_reason",
    "ensure_sandbox",
    "run_command",
    "serve",
]
