"""The mobile MCP servers: MobileDataCollector and MobileExecutor (spec C §13.9).

Public API::

    MobileServerState(adb, clock=time.monotonic)   caches + last control/app lists of one device
    mobile_state(adb=None) -> MobileServerState    the one state of a device in this process
    device_adb(serial="", adb_path="") -> Adb      the options' device, else $STARWEAVE_ADB_*, else found
    MobileRegistry(state, base=None)               in-process servers, the mobile ones on ``state``
    create_data_collector_server(state) -> MCPServer   "Mobile Data Collector MCP Server"
    create_executor_server(state) -> MCPServer         "Mobile Executor MCP Server"
    serve_mobile(adb, host, data_port, action_port, announce=None)   both over HTTP, one process
    parse_controls(xml) -> list[MobileControl]     the uiautomator XML through the control filter
    danger_word(label), action_risk(tool, arguments, controls)   what needs CONFIRM
    assess(tool, arguments, controls) -> Risk | None   the reason and the control it is about
    app_risk(package) -> Risk | None               launching a store, installer, wallet or pay app
"""

from starweave.tools.servers.mobile.binding import MOBILE_NAMESPACES, MobileRegistry
from starweave.tools.servers.mobile.collector import create_data_collector_server
from starweave.tools.servers.mobile.executor import create_executor_server, resolve_app_name
from starweave.tools.servers.mobile.risk import Risk, action_risk, app_risk, assess
from starweave.tools.servers.mobile.serve import serve_mobile
from starweave.tools.servers.mobile.state import (
    MobileServerState,
    device_adb,
    mobile_state,
)
from starweave.tools.servers.mobile.uitree import MobileControl, danger_word, parse_controls

__all__ = [
    "MOBILE_NAMESPACES",
    "MobileControl",
    "MobileRegistry",
    "MobileServerState",
    "Risk",
    "action_risk",
    "app_risk",
    "assess",
    "create_data_collector_server",
    "create_executor_server",
    "danger_word",
    "device_adb",
    "mobile_state",
    "parse_controls",
    "resolve_app_name",
    "serve_mobile",
]
