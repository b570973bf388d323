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
from starweave.tools.servers.shell.parser import CommandLine, parse_command_line
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.policy import PolicyDecision, PreparedCommand, ShellPolicy
from starweave.tools.servers.shell.runner import clean_env, run_command
from starweave.tools.servers.shell.sandbox import (
    SandboxChoice,
    current_confinement,
    ensure_sandbox,
    probe_bwrap,
    select_sandbox,
)
from starweave.tools.servers.shell.server import PolicyHolder, create_bash_server, serve

__all__ = [
    "CommandLine",
    "PathGuard",
    "PolicyDecision",
    "PolicyHolder",
    "PreparedCommand",
    "SandboxChoice",
    "ShellPolicy",
    "clean_env",
    "create_bash_server",
    "current_confinement",
    "dangerous_reason",
    "ensure_sandbox",
    "parse_command_line",
    "probe_bwrap",
    "run_command",
    "select_sandbox",
    "serve",
]
