"""Starweave's own MCP servers and their registration as in-process (``local``) servers.

Namespaces follow the reference's ``mcp.yaml``: ``BashExecutor`` (``execute_command``,
``get_system_info``) and our ``FileExecutor`` (``read_file``, ``write_file``, ``list_directory``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from starweave.config.known_workspaces import remember_workspace
from starweave.config.workspace import workspace_problem
from starweave.errors import ToolError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from starweave.config import ShellConfig
    from starweave.tools.servers.http_access import HttpAccess

BUILTIN_SERVERS = ("BashExecutor", "FileExecutor")
CLI_NAMES = {"bash": "BashExecutor", "files": "FileExecutor"}


def _bash(shell: ShellConfig) -> MCPServer:
    from starweave.tools.servers.shell import create_bash_server

    return create_bash_server(shell)


def _files(shell: ShellConfig) -> MCPServer:
    from starweave.tools.servers.files import create_file_server

    return create_file_server(shell)


def _desktop(namespace: str) -> Callable[[ShellConfig], MCPServer]:
    """Factory of a desktop UI server; the three of one session share its UIState."""

    def factory(shell: ShellConfig) -> MCPServer:
        from starweave.tools.servers import desktop

        builders = {
            "UICollector": desktop.create_ui_collector_server,
            "HostUIExecutor": desktop.create_host_executor_server,
            "AppUIExecutor": desktop.create_app_executor_server,
        }
        return builders[namespace](desktop.shared_ui_state(shell))

    return factory


def _mobile(namespace: str) -> Callable[[ShellConfig], MCPServer]:
    """Factory of a mobile server on this process's phone ($STARWEAVE_ADB_*); a session bound to another
    phone builds its servers through ``mobile.MobileRegistry(state)`` instead."""

    def factory(shell: ShellConfig) -> MCPServer:
        from starweave.tools.servers import mobile

        state = mobile.mobile_state()
        if namespace == "MobileDataCollector":
            return mobile.create_data_collector_server(state)
        return mobile.create_executor_server(state)

    return factory


def _text_editor(shell: ShellConfig) -> MCPServer:
    from starweave.tools.servers.desktop import create_text_editor_server

    return create_text_editor_server(shell)


def resolve_workspace(path: Path | None, mode: str = "workspace") -> Path:
    """The absolute workspace folder (default: the current one), created if it does not exist yet.

    A system folder, a home folder itself or a home's dot-folder is refused (everything in it would be
    writable; see ``starweave.config.workspace``) unless SHELL.MODE is unrestricted. The folder is
    remembered, so that no later run loads configuration from it (``config.known_workspaces``).
    """
    workspace = (path or Path.cwd()).expanduser().resolve()
    problem = None if mode == "unrestricted" else workspace_problem(workspace)
    if problem:
        raise ToolError(
            f"refusing to use {workspace} as the workspace ({problem}): every file in it would be writable "
            "by the agent. Pass --workspace with a project folder (it is created if missing)"
        )
    if workspace.exists() and not workspace.is_dir():
        raise ToolError(f"workspace {workspace} exists and is not a folder")
    try:
        workspace.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"cannot create the workspace {workspace}: {exc.strerror or exc}") from None
    if mode != "unrestricted":  # unrestricted commands can write anywhere, the record included
        remember_workspace(workspace)
    return workspace


def register_builtin_servers() -> None:
    """Register our servers in the default local registry (idempotent)."""
    from starweave.tools.mcp_manager import default_registry

    for namespace, factory in (("BashExecutor", _bash), ("FileExecutor", _files)):
        default_registry.register_factory(namespace, factory, replace=True)
    for namespace in ("UICollector", "HostUIExecutor", "AppUIExecutor"):
        default_registry.register_factory(namespace, _desktop(namespace), replace=True)
    default_registry.register_factory("TextEditorExecutor", _text_editor, replace=True)
    for namespace in ("MobileDataCollector", "MobileExecutor"):
        default_registry.register_factory(namespace, _mobile(namespace), replace=True)


async def serve_named(
    name: str,
    transport: str,
    host: str,
    port: int,
    workspace: Path | None,
    config_dir: Path | None,
    access: HttpAccess | None = None,
) -> None:
    """Serve one of our servers (``bash`` or ``files``) over stdio or streamable HTTP (guarded by
    ``access``: :mod:`starweave.tools.servers.http_access`)."""
    from starweave.config import load_config
    from starweave.tools.servers.shell import ensure_sandbox, serve

    namespace = CLI_NAMES.get(name, name)
    if namespace not in BUILTIN_SERVERS:
        raise ToolError(f"unknown server {name!r}; choose one of: {', '.join(CLI_NAMES)}")
    mode = load_config(config_dir).system.shell.mode
    folder = resolve_workspace(workspace, mode)
    config = load_config(config_dir, overrides={"system": {"SHELL": {"WORKSPACE": str(folder)}}})
    if namespace == "BashExecutor":
        await ensure_sandbox(config.system.shell)  # a required sandbox that is missing: exit 2 now
    server = _bash(config.system.shell) if namespace == "BashExecutor" else _files(config.system.shell)
    await serve(server, transport, host=host, port=port, access=access)
