"""The Computer: the tools of one agent context, gathered from its MCP servers.

A Computer is built from the ``data_collection`` and ``action`` server lists of one ``mcp.yaml``
entry. It lists each server's tools into ``_tools_registry`` under ``"tool_type::tool_name"`` and runs
tool calls one after another, each under a timeout.

Why no thread pool (the reference runs every call in a pool thread with its own event loop): the MCP
client is async end to end. In-process servers run ``async def`` tools on our loop and the SDK
already moves plain ``def`` tools to a worker thread (``anyio.to_thread``); stdio and HTTP servers
run in other processes. So a call never blocks the loop as long as an ``async`` tool does not block,
which our servers guarantee by sending blocking work to ``asyncio.to_thread``. A call runs in its own
task and is abandoned (not awaited) when its timeout passes, so even a tool stuck in a thread cannot
hold the caller past the timeout.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp.types import CallToolResult, TextContent, Tool

from starweave.commands import Command
from starweave.config.models import McpServerConfig
from starweave.errors import ToolError
from starweave.tools.mcp_manager import MCPServerHandle, MCPServerManager, describe_exception

logger = logging.getLogger(__name__)

ToolType = Literal["data_collection", "action"]
TOOL_TYPES: tuple[ToolType, ...] = ("action", "data_collection")
REGISTRATION_ORDER: tuple[ToolType, ...] = ("data_collection", "action")
META_NAMESPACE = "Computer"
DEFAULT_TOOL_TIMEOUT = 6000.0


def make_tool_key(tool_type: str, tool_name: str) -> str:
    """``"action::run_shell"``: the registry key of one tool."""
    return f"{tool_type}::{tool_name}"


@dataclass
class MCPToolCall:
    """One tool of a Computer, or (with ``parameters``) one call of it."""

    tool_key: str
    tool_name: str
    namespace: str
    tool_type: ToolType
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    server: MCPServerHandle | None = field(default=None, repr=False)
    parameters: dict[str, Any] | None = None

    @property
    def is_meta(self) -> bool:
        """True for the Computer's own tools (``list_tools``)."""
        return self.server is None

    def info(self) -> dict[str, Any]:
        """The description shown to the model and returned by ``list_tools``."""
        return {
            "tool_key": self.tool_key,
            "tool_name": self.tool_name,
            "namespace": self.namespace,
            "tool_type": self.tool_type,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def error_result(text: str) -> CallToolResult:
    """A CallToolResult flagged as an error, carrying ``text``."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class Computer:
    """The tools of one (agent, process) context; ``await async_init()`` before use."""

    def __init__(
        self,
        name: str,
        process_name: str | None,
        server_manager: MCPServerManager,
        data_collection_servers: Iterable[McpServerConfig] = (),
        action_servers: Iterable[McpServerConfig] = (),
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        self.name = name
        self.process_name = process_name
        self.server_manager = server_manager
        self.tool_timeout = tool_timeout
        self._configs: dict[ToolType, list[McpServerConfig]] = {
            "data_collection": list(data_collection_servers),
            "action": list(action_servers),
        }
        self._servers: dict[ToolType, dict[str, MCPServerHandle]] = {"data_collection": {}, "action": {}}
        self._tools_registry: dict[str, MCPToolCall] = {}
        self._meta_tools: dict[str, MCPToolCall] = {}
        # Calls abandoned at their timeout; kept referenced until they finish.
        self._abandoned: set[asyncio.Task[CallToolResult]] = set()
        self._register_meta_tools()

    # Registration -------------------------------------------------------------------------------

    async def async_init(self) -> None:
        """Start every configured server in parallel, then register their tools in config order.

        Registering in config order makes a duplicate tool name always blame the later server.
        Raises ToolError if a server cannot start or two servers of one type offer the same tool.
        """
        pairs: list[tuple[ToolType, McpServerConfig]] = [
            (tool_type, cfg) for tool_type in REGISTRATION_ORDER for cfg in self._configs[tool_type]
        ]
        handles = await asyncio.gather(
            *(self.server_manager.get_or_create(cfg, self.process_name) for _, cfg in pairs),
            return_exceptions=True,
        )
        failures = [describe_exception(h) for h in handles if isinstance(h, BaseException)]
        if failures:
            raise ToolError(f"Computer {self.name!r}: " + "; ".join(failures))
        listings = await asyncio.gather(*(self._list(h) for h in handles if isinstance(h, MCPServerHandle)))
        try:
            for (tool_type, cfg), handle, tools in zip(pairs, handles, listings, strict=True):
                assert isinstance(handle, MCPServerHandle)
                self._register(cfg.namespace, tool_type, handle, tools)
        except ToolError:
            self._clear()  # all or nothing: a half-registered Computer would hide the problem
            raise

    async def register_one_mcp_server(
        self, namespace: str, tool_type: ToolType, server: MCPServerHandle
    ) -> None:
        """List ``server``'s tools and register them under ``tool_type``."""
        self._register(namespace, tool_type, server, await self._list(server))

    async def _list(self, server: MCPServerHandle) -> list[Tool]:
        try:
            return await server.list_tools()
        except ToolError as exc:  # the handle turns any protocol or connection failure into one
            raise ToolError(f"{server.label} could not list its tools: {describe_exception(exc)}") from exc

    def _register(
        self, namespace: str, tool_type: ToolType, server: MCPServerHandle, tools: list[Tool]
    ) -> None:
        if namespace in self._servers[tool_type]:
            raise ToolError(
                f"Computer {self.name!r}: a {tool_type} server named {namespace!r} is already registered"
            )
        entries: dict[str, MCPToolCall] = {}
        for tool in tools:
            key = make_tool_key(tool_type, tool.name)
            clash = self._tools_registry.get(key) or entries.get(key)
            if clash is not None:
                owner = "the Computer's built-in tools" if clash.is_meta else f"server {clash.namespace!r}"
                raise ToolError(
                    f"Computer {self.name!r}: {tool_type} tool {tool.name!r} of server {namespace!r} "
                    f"is also offered by {owner}; rename one of them or move one server to another agent"
                )
            entries[key] = MCPToolCall(
                tool_key=key,
                tool_name=tool.name,
                namespace=namespace,
                tool_type=tool_type,
                description=tool.description or "",
                input_schema=dict(tool.input_schema or {}),
                output_schema=dict(tool.output_schema) if tool.output_schema else None,
                server=server,
            )
        self._servers[tool_type][namespace] = server
        self._tools_registry.update(entries)

    def _register_meta_tools(self) -> None:
        schema = {
            "type": "object",
            "properties": {
                "tool_type": {"type": ["string", "null"], "description": "action or data_collection"},
                "namespace": {"type": ["string", "null"]},
                "remove_meta": {"type": "boolean"},
            },
        }
        for tool_type in TOOL_TYPES:
            key = make_tool_key(tool_type, "list_tools")
            tool = MCPToolCall(
                key, "list_tools", META_NAMESPACE, tool_type, "List the tools of this computer.", schema
            )
            self._meta_tools[key] = tool
            self._tools_registry[key] = tool

    async def add_server(
        self, namespace: str, server: MCPServerHandle | McpServerConfig, tool_type: ToolType
    ) -> None:
        """Add a server while running: an open handle, or a config the manager starts."""
        if isinstance(server, McpServerConfig):
            server = await self.server_manager.get_or_create(server, self.process_name)
        await self.register_one_mcp_server(namespace, tool_type, server)

    async def delete_server(self, namespace: str, tool_type: ToolType) -> None:
        """Remove a server and its tools from this Computer (the manager keeps the session)."""
        if self._servers[tool_type].pop(namespace, None) is None:
            raise ToolError(
                f"Computer {self.name!r} has no {tool_type} server {namespace!r}; "
                f"registered: {sorted(self._servers[tool_type])}"
            )
        for key in [
            k
            for k, t in self._tools_registry.items()
            if t.namespace == namespace and t.tool_type == tool_type
        ]:
            del self._tools_registry[key]

    async def reset(self) -> None:
        """Forget the tools, restart the servers marked ``reset: true`` and register everything again."""
        self._clear()
        for tool_type in REGISTRATION_ORDER:
            for cfg in self._configs[tool_type]:
                if cfg.reset:
                    await self.server_manager.restart(cfg, self.process_name)
        await self.async_init()

    def _clear(self) -> None:
        self._servers = {"data_collection": {}, "action": {}}
        self._tools_registry = dict(self._meta_tools)

    def server_configs(self) -> list[McpServerConfig]:
        """The configured servers, data-collection first."""
        return [*self._configs["data_collection"], *self._configs["action"]]

    # Lookup -------------------------------------------------------------------------------------

    @property
    def servers(self) -> dict[str, dict[str, MCPServerHandle]]:
        """The registered servers by tool type and namespace (copies)."""
        return {kind: dict(servers) for kind, servers in self._servers.items()}

    def get_tool(self, tool_type: str, tool_name: str) -> MCPToolCall | None:
        """The tool registered as ``tool_type::tool_name``, or None."""
        return self._tools_registry.get(make_tool_key(tool_type, tool_name))

    def tools(
        self, tool_type: str | None = None, namespace: str | None = None, remove_meta: bool = True
    ) -> list[MCPToolCall]:
        """The registered tools, optionally filtered."""
        return [
            tool
            for tool in self._tools_registry.values()
            if (tool_type is None or tool.tool_type == tool_type)
            and (namespace is None or tool.namespace == namespace)
            and not (remove_meta and tool.is_meta)
        ]

    def list_tools(
        self, tool_type: str | None = None, namespace: str | None = None, remove_meta: bool = True
    ) -> CallToolResult:
        """Meta tool ``list_tools``: the tools' descriptions as one JSON text."""
        infos = [tool.info() for tool in self.tools(tool_type, namespace, remove_meta)]
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(infos))], structured_content=None
        )

    def action_tools(self) -> list[dict[str, Any]]:
        """The action tools' descriptions for the prompt (never the data-collection ones)."""
        return [tool.info() for tool in self.tools("action")]

    def command2tool(self, command: Command) -> MCPToolCall:
        """The call for ``command``; a missing ``tool_type`` is looked up (action first).

        Raises ToolError naming the tool and the available action tools if nothing matches.
        """
        tool_type = getattr(command, "tool_type", None)
        kinds: tuple[str, ...] = (tool_type,) if tool_type else TOOL_TYPES
        for kind in kinds:
            tool = self.get_tool(kind, command.tool_name)
            if tool is not None:
                return dataclasses.replace(tool, parameters=dict(command.parameters or {}))
        raise ToolError(self.missing_tool_message(command.tool_name, tool_type))

    def missing_tool_message(self, tool_name: str, tool_type: str | None) -> str:
        """Why ``tool_name`` cannot be called, with what can be."""
        kind = f"{tool_type} tool" if tool_type else "tool"
        message = f"No {kind} named {tool_name!r} on computer {self.name!r}"
        other = [t for t in TOOL_TYPES if t != tool_type and self.get_tool(t, tool_name) is not None]
        if tool_type and other:
            message += f" (it exists as a {other[0]} tool)"
        names = sorted(tool.tool_name for tool in self.tools("action"))
        return f"{message}; available action tools: {names}"

    # Execution ----------------------------------------------------------------------------------

    async def run_actions(self, calls: list[MCPToolCall]) -> list[CallToolResult]:
        """Run ``calls`` one after another; a timeout or transport error becomes an error result."""
        return [await self._run_action(call) for call in calls]

    async def _run_action(self, call: MCPToolCall) -> CallToolResult:
        params = dict(call.parameters or {})
        if call.is_meta:
            return self._run_meta(call, params)
        assert call.server is not None
        task = asyncio.create_task(
            call.server.call_tool(call.tool_name, params), name=f"tool:{call.tool_key}"
        )
        done, _ = await asyncio.wait({task}, timeout=self.tool_timeout)
        if not done:
            task.cancel()
            self._abandoned.add(task)
            task.add_done_callback(self._forget)
            return error_result(f"Tool execution timed out after {self.tool_timeout:g}s")
        try:
            return task.result()
        except ToolError as exc:  # a broken connection or protocol error: report it as the tool's result
            return error_result(
                f"Tool {call.tool_name!r} on server {call.namespace!r} failed: {describe_exception(exc)}"
            )

    def _run_meta(self, call: MCPToolCall, params: dict[str, Any]) -> CallToolResult:
        if call.tool_name != "list_tools":
            return error_result(f"Unknown meta tool {call.tool_name!r}")
        unknown = sorted(set(params) - {"tool_type", "namespace", "remove_meta"})
        if unknown:
            return error_result(
                f"list_tools got unknown arguments {unknown}; use tool_type, namespace, remove_meta"
            )
        # Called as action::list_tools it lists action tools unless asked otherwise, so the model is
        # not shown data-collection tools by accident.
        tool_type = params.get("tool_type", call.tool_type)
        return self.list_tools(tool_type, params.get("namespace"), bool(params.get("remove_meta", True)))

    def _forget(self, task: asyncio.Task[CallToolResult]) -> None:
        self._abandoned.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.debug("abandoned tool call %s ended with %s", task.get_name(), task.exception())

    def __repr__(self) -> str:
        return f"Computer({self.name!r}, process={self.process_name!r}, tools={len(self._tools_registry)})"
