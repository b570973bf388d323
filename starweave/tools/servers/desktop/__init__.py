"""The desktop MCP servers: UICollector, HostUIExecutor, AppUIExecutor and TextEditorExecutor.

Public API::

    UIState(backend_factory=default_backend, limits=WalkLimits())   shared by the three UI servers
    shared_ui_state(shell, backend_factory=None) -> UIState          one per session (ShellConfig object)
    create_ui_collector_server(state) -> MCPServer                   "UFO UI Data MCP Server"
    create_host_executor_server(state) -> MCPServer                  "UFO UI HostAgent Action MCP Server"
    create_app_executor_server(state) -> MCPServer                   "UFO UI AppAgent Action MCP Server"
    create_text_editor_server(shell, editor_command=("mousepad",))   "Text Editor API MCP Server"
"""

from starweave.tools.servers.desktop.app_executor import create_app_executor_server
from starweave.tools.servers.desktop.editor_api import create_text_editor_server
from starweave.tools.servers.desktop.host_executor import create_host_executor_server
from starweave.tools.servers.desktop.state import UIState, default_backend, shared_ui_state
from starweave.tools.servers.desktop.ui_collector import create_ui_collector_server

__all__ = [
    "UIState",
    "create_app_executor_server",
    "create_host_executor_server",
    "create_text_editor_server",
    "create_ui_collector_server",
    "default_backend",
    "shared_ui_state",
]
