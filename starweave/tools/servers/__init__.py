"""Starweave's own MCP servers and their registration as in-process (``local``) servers.

Namespaces follow the reference's ``mcp.yaml``: ``BashExecutor`` (``execute_command``,
``get_system_info``) and our ``FileExecutor`` (``read_file``, ``write_file``, ``list_directory``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from starweave.errors import ToolError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from starweave.config import ShellConfig

BUILTIN_SERVERS = ("BashExecutor", "FileExecutor")
CLI_NAMES = {"bash": "BashExecutor", "files": "FileExecutor"}


def _bash(shell: ShellConfig) -> MCPServer:
    from starweave.tools.servers.shell import create_bash_server

    return create_bash_server(shell)


def _files(shell: ShellConfig) -> MCPServer:
    from starweave.tools.servers.files import create_file_server

    return create_file_server(shell)


def resolve_workspace(path: Path | None) -> Path:
    """The absolute workspace folder (default: the current one), created if it does not exist yet."""
    workspace = (path or Path.cwd()).expanduser().resolve()
    if workspace.exists() and not workspace.is_dir():
        raise ToolError(f"workspace {workspace} exists and is not a folder")
    workspace.mkdir(parents=True, exist_ok=True)
    return workspace


def register_builtin_servers() -> None:
    """Register our servers in the default local registry (idempotent)."""
    from starweave.tools.mcp_manager import default_registry

    for namespace, factory in (("BashExecutor", _bash), ("FileExecutor", _files)):
        default_registry.register_factory(namespace, factory, replace=True)


async def serve_named(
    name: str,
    transport: str,
    host: str,
    port: int,
    workspace: Path | None,
    config_dir: Path | None,
) -> None:
    """Serve one of our servers (``bash`` or ``files``) over stdio or streamable HTTP."""
    from starweave.config import load_config
    from starweave.tools.servers.shell import serve

    namespace = CLI_NAMES.get(name, name)
    if namespace not in BUILTIN_SERVERS:
        raise ToolError(f"unknown server {name!r}; choose one of: {', '.join(CLI_NAMES)}")
    folder = resolve_workspace(workspace)
    config = load_config(config_dir, overrides={"system": {"SHELL": {"WORKSPACE": str(folder)}}})
    server = _bash(config.system.shell) if namespace == "BashExecutor" else _files(config.system.shell)
    await serve(server, transport, host=host, port=port)
