"""Which phone a session's in-process mobile servers drive: passed explicitly, never looked up.

A session (``starweave run --agent mobile``, ``starweave client --platform mobile``) builds its MCP
servers through an :class:`~starweave.tools.mcp_manager.MCPRegistry`. :class:`MobileRegistry` is
one whose MobileDataCollector and MobileExecutor factories are closures over that session's
:class:`MobileServerState`, so both servers share the device's caches (the controls that
``click_control`` looks up) and no global table ties a session to its phone.
"""

from __future__ import annotations

from starweave.tools.mcp_manager import MCPRegistry, default_registry
from starweave.tools.servers.mobile.collector import create_data_collector_server
from starweave.tools.servers.mobile.executor import create_executor_server
from starweave.tools.servers.mobile.state import MobileServerState

DATA_COLLECTOR_NAMESPACE = "MobileDataCollector"
EXECUTOR_NAMESPACE = "MobileExecutor"
#: The namespaces served by the state's device (``mcp.yaml``'s MobileAgent entry).
MOBILE_NAMESPACES = (DATA_COLLECTOR_NAMESPACE, EXECUTOR_NAMESPACE)


class MobileRegistry(MCPRegistry):
    """The in-process servers of ``base`` (read at creation), with the two mobile servers bound to
    ``state``'s device; ``state`` stays readable (the device checks probe its adb)."""

    def __init__(self, state: MobileServerState, base: MCPRegistry | None = None) -> None:
        super().__init__()
        self.state = state
        source = base or default_registry
        for name in source.names():
            self.register_factory(name, source.get(name))
        self.register_factory(
            DATA_COLLECTOR_NAMESPACE, lambda _shell: create_data_collector_server(state), replace=True
        )
        self.register_factory(EXECUTOR_NAMESPACE, lambda _shell: create_executor_server(state), replace=True)
