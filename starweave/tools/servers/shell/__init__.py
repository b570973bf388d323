"""Linux shell tools: command-line parser, argv policy, bubblewrap sandbox, runner and MCP server.

Public API::

    ShellPolicy(config, *, sandboxed=False)      .evaluate(cmd, cwd) -> PolicyDecision, .enforce(...)
    await run_command(cmd, policy=, timeout=, cwd=) -> dict
    dangerous_reason(cmd) -> str | None
    create_bash_server(shell) -> MCPServer;  await serve(server, transport, host, port)
"""

from starweave.tools.servers.shell.danger import dangerous_reason
from starweave.tools.servers.shell.parser import CommandLine, parse_command_line
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.policy import PolicyDecision, PreparedCommand, ShellPolicy
from starweave.tools.servers.shell.runner import clean_env, run_command
from starweave.tools.servers.shell.sandbox import probe_bwrap, sandbox_enabled
from starweave.tools.servers.shell.server import PolicyHolder, create_bash_server, serve

__all__ = [
    "CommandLine",
    "PathGuard",
    "PolicyDecision",
    "PolicyHolder",
    "PreparedCommand",
    "ShellPolicy",
    "clean_env",
    "create_bash_server",
    "dangerous_reason",
    "parse_command_line",
    "probe_bwrap",
    "run_command",
    "sandbox_enabled",
    "serve",
]
