"""MCP server handles: the registry of in-process servers and the manager of open client sessions.

An :class:`MCPServerHandle` is one open MCP client session to one server of ``mcp.yaml``:

- ``local``: a factory from the :class:`MCPRegistry` builds an ``MCPServer`` in this process and the
  client talks to it directly (no JSON-RPC framing, well under a millisecond per call);
- ``http``: streamable HTTP at ``http://host:port/path``, sending the server's key (the variable
  the entry's ``api_key_env`` names) as ``Authorization: Bearer KEY``;
- ``stdio``: a child process (``command`` + ``start_args``, ``env`` merged onto the SDK's minimal
  environment, ``cwd``) spoken to over its stdin/stdout.

The session stays open for the handle's lifetime; nothing reconnects per call. The SDK's client
session lives inside anyio task groups, and those must be entered and exited by the same task, so
every handle runs a small owner task that opens the session, waits until it is told to close, and
closes it. Tool calls may come from any task.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar, cast

from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, Tool

from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.errors import ToolError

logger = logging.getLogger(__name__)

LocalServerFactory = Callable[[ShellConfig], MCPServer]
"""Builds one in-process MCP server for a device whose shell settings (workspace, mode) are given."""

_F = TypeVar("_F", bound=LocalServerFactory)
_T = TypeVar("_T")

# Modules imported on the first lookup, so that the servers we ship register their factories.
DEFAULT_AUTOLOAD = ("starweave.tools.servers",)


class MCPRegistry:
    """Named factories of in-process (``type: local``) MCP servers.

    ``autoload`` names modules imported once, at the first lookup, so nobody has to remember to
    import the server modules: a module registers its factories on import, or defines
    ``register_builtin_servers()``, which is then called.
    """

    def __init__(self, autoload: tuple[str, ...] = ()) -> None:
        self._factories: dict[str, LocalServerFactory] = {}
        self._autoload = autoload
        self._loaded = not autoload

    def register_factory(self, namespace: str, factory: LocalServerFactory, *, replace: bool = False) -> None:
        """Register ``factory`` under ``namespace``; a second registration needs ``replace=True``."""
        if not namespace:
            raise ToolError("An MCP server namespace must be a non-empty string")
        if namespace in self._factories and not replace and self._factories[namespace] is not factory:
            raise ToolError(
                f"An MCP server is already registered as {namespace!r}; "
                "pick another namespace or pass replace=True"
            )
        self._factories[namespace] = factory

    def register(self, namespace: str) -> Callable[[_F], _F]:
        """Decorator form of :meth:`register_factory`."""

        def decorator(factory: _F) -> _F:
            self.register_factory(namespace, factory)
            return factory

        return decorator

    def unregister(self, namespace: str) -> None:
        """Forget ``namespace`` (no error when it is unknown)."""
        self._factories.pop(namespace, None)

    def get(self, namespace: str) -> LocalServerFactory:
        """The factory registered as ``namespace``; ToolError naming the registered ones if unknown."""
        self._load()
        try:
            return self._factories[namespace]
        except KeyError:
            raise ToolError(
                f"No MCP server found for name {namespace!r}; registered: {self.names()}"
            ) from None

    def names(self) -> list[str]:
        """The registered namespaces, sorted."""
        self._load()
        return sorted(self._factories)

    def __contains__(self, namespace: object) -> bool:
        self._load()
        return namespace in self._factories

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        import importlib

        for name in self._autoload:
            module = importlib.import_module(name)
            # A package may register on import or expose an explicit hook; support both.
            hook = getattr(module, "register_builtin_servers", None)
            if callable(hook):
                hook()


default_registry = MCPRegistry(autoload=DEFAULT_AUTOLOAD)
"""The process-wide registry; ``@register_local_server("Name")`` adds to it."""


def register_local_server(namespace: str) -> Callable[[_F], _F]:
    """Register a ``(ShellConfig) -> MCPServer`` factory in the default registry."""
    return default_registry.register(namespace)


def describe_exception(exc: BaseException) -> str:
    """A one-line cause, unwrapping anyio's exception groups to the errors inside them."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_exception(inner) for inner in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ToolError) else f"{type(exc).__name__}: {text}"


def _as_tool_error(exc: Exception) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    error = ToolError(describe_exception(exc))
    error.__cause__ = exc
    return error


async def _transport(call: Awaitable[_T]) -> _T:
    """Await one client request: the MCP client, its transports and anyio raise many unrelated
    types, so this is the single boundary that turns any of them into a described ToolError."""
    try:
        return await call
    except Exception as exc:  # the transport boundary (see the docstring)
        raise ToolError(describe_exception(exc)) from exc


@dataclass(frozen=True)
class HttpTarget:
    """A streamable-HTTP server and the key sent to it (kept out of ``repr``: no log shows it)."""

    url: str
    key: str = field(default="", repr=False)


def http_target(config: McpServerConfig) -> HttpTarget:
    """The URL of an ``http`` entry and its key; ToolError when the variable it names is unset.

    Only an entry naming ``api_key_env`` gets a key: a key read from a default variable would be
    sent to every http server in mcp.yaml, third parties' included."""
    path = config.path if config.path.startswith("/") else f"/{config.path}"
    url = f"http://{config.host}:{config.port}{path}"
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    if config.api_key_env and not key:
        raise ToolError(
            f"http server {config.namespace!r} ({url}): its key variable {config.api_key_env} "
            "(api_key_env in mcp.yaml) is not set"
        )
    return HttpTarget(url, key)


class MCPServerHandle:
    """One open client session to one MCP server; create it through :class:`MCPServerManager`."""

    def __init__(
        self,
        config: McpServerConfig,
        target: MCPServer | StdioServerParameters | HttpTarget,
        label: str,
        errlog: TextIO | None = None,
    ) -> None:
        self.config = config
        self.namespace = config.namespace
        self.label = label
        self._target = target
        self._errlog = errlog
        self._client: Client | None = None
        self._ready: asyncio.Future[Client] | None = None
        self._closing = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None

    @property
    def started(self) -> bool:
        """True while the session is open."""
        return self._client is not None and self._owner is not None and not self._owner.done()

    @property
    def client(self) -> Client:
        """The open MCP client; ToolError if the handle is not started or already closed."""
        if self._client is None or not self.started:
            raise ToolError(f"MCP server {self.label} is not connected; reset the session to reconnect")
        return self._client

    async def start(self, startup_timeout: float) -> None:
        """Open the session; ToolError naming the server and the cause if it cannot be opened."""
        if self._owner is not None:
            return
        self._ready = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own_session(), name=f"mcp-session:{self.namespace}")
        try:
            self._client = await asyncio.wait_for(asyncio.shield(self._ready), startup_timeout)
        except TimeoutError:
            cause = f"no answer within {startup_timeout:g}s"
        except ToolError as exc:  # _own_session's failure, already described
            cause = describe_exception(exc)
        else:
            return
        await self._stop_owner()
        message = f"{self.label} failed to start: {cause}{self._stderr_tail()}"
        await self.aclose()
        raise ToolError(message)

    async def _own_session(self) -> None:
        assert self._ready is not None
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(await self._transport(stack)))
                self._ready.set_result(client)
                await self._closing.wait()
        except Exception as exc:
            # Before the session is ready the failure belongs to start(); afterwards the connection
            # died under us and the next call will report it.
            if not self._ready.done():
                self._ready.set_exception(_as_tool_error(exc))
            else:
                logger.warning("MCP session %s ended with an error: %s", self.label, describe_exception(exc))
        finally:
            if not self._ready.done():
                self._ready.cancel()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        """What the SDK's Client connects to, its HTTP client (if any) closed with ``stack``."""
        target = self._target
        if isinstance(target, StdioServerParameters) and self._errlog is not None:
            # Our own transport so the child's stderr lands in errlog, not on our terminal.
            return stdio_client(target, errlog=self._errlog)
        if isinstance(target, HttpTarget):
            headers = {"Authorization": f"Bearer {target.key}"} if target.key else None
            http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
            return streamable_http_client(target.url, http_client=http)
        return target

    async def list_tools(self) -> list[Tool]:
        """Every tool the server offers (following pagination); ToolError on any failure."""
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await _transport(self.client.list_tools(cursor=cursor))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call one tool; ToolError on any failure. Timeouts are the caller's business (see
        :class:`~starweave.tools.Computer`)."""
        return await _transport(self.client.call_tool(name, arguments))

    async def _stop_owner(self) -> None:
        self._closing.set()
        owner, self._owner = self._owner, None
        self._client = None
        if owner is None:
            return
        if self._ready is not None and not self._ready.done():
            # Still connecting: nothing to close politely, so stop the attempt.
            owner.cancel()
        # asyncio.wait neither raises the owner's outcome nor swallows our own cancellation.
        await asyncio.wait({owner})
        if self._ready is not None and self._ready.done() and not self._ready.cancelled():
            self._ready.exception()  # a start failure has been reported by start()

    async def aclose(self) -> None:
        """Close the session (and stop a stdio child); safe to call twice."""
        await self._stop_owner()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    def _stderr_tail(self, limit: int = 800) -> str:
        if self._errlog is None or self._errlog.closed:
            return ""
        self._errlog.flush()
        self._errlog.seek(0)
        text = self._errlog.read().strip()
        return f"; stderr: {text[-limit:]}" if text else ""

    def __repr__(self) -> str:
        return f"MCPServerHandle({self.label}, started={self.started})"


class MCPServerManager:
    """Creates, caches and closes the MCP server handles of one device.

    A server with ``reset: false`` is shared by every Computer that lists it; a server with
    ``reset: true`` gets a fresh instance per process context and is recreated by :meth:`restart`,
    so state does not leak from one application (or document) to the next.
    """

    def __init__(
        self,
        shell: ShellConfig | None = None,
        registry: MCPRegistry | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.shell = shell or ShellConfig.model_validate({})
        self.registry = registry or default_registry
        self.startup_timeout = startup_timeout
        self._servers: dict[str, MCPServerHandle] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    @staticmethod
    def server_key(config: McpServerConfig, process_name: str | None = None) -> str:
        """The cache key: the transport settings, plus the process when the server resets."""
        key = config.model_dump_json(exclude={"reset"})
        return f"{key}::{process_name}" if config.reset else key

    async def get_or_create(
        self, config: McpServerConfig, process_name: str | None = None
    ) -> MCPServerHandle:
        """The open handle for ``config``, started on first use; ToolError if it cannot start."""
        key = self.server_key(config, process_name)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            handle = self._servers.get(key)
            if handle is not None and handle.started:
                return handle
            handle = self._build(config)
            await handle.start(self.startup_timeout)
            self._servers[key] = handle
            return handle

    async def create_servers_from_config(
        self, mcp_config: Mapping[str, Mapping[str, McpServerSet]]
    ) -> list[MCPServerHandle]:
        """Start every shared (``reset: false``) server of an ``MCP`` section now, in parallel.

        Lets a device client fail at startup rather than at the first command; reset servers are
        per process and start when a Computer needs them. ToolError lists every server that failed.
        """
        configs: dict[str, McpServerConfig] = {}
        for sub_types in mcp_config.values():
            for server_set in sub_types.values():
                for cfg in (*server_set.data_collection, *server_set.action):
                    if not cfg.reset:
                        configs.setdefault(self.server_key(cfg), cfg)
        outcomes = await asyncio.gather(
            *(self.get_or_create(c) for c in configs.values()), return_exceptions=True
        )
        failures = [describe_exception(o) for o in outcomes if isinstance(o, BaseException)]
        if failures:
            raise ToolError("; ".join(failures))
        return [o for o in outcomes if isinstance(o, MCPServerHandle)]

    async def restart(self, config: McpServerConfig, process_name: str | None = None) -> MCPServerHandle:
        """Close the cached handle for ``config`` (if any) and start a fresh one."""
        await self.close_server(config, process_name)
        return await self.get_or_create(config, process_name)

    async def close_server(self, config: McpServerConfig, process_name: str | None = None) -> None:
        """Close the cached handle for ``config`` if there is one; the next request starts it afresh."""
        key = self.server_key(config, process_name)
        async with self._locks.setdefault(key, asyncio.Lock()):
            handle = self._servers.pop(key, None)
            if handle is not None:
                await handle.aclose()

    async def reset(self) -> None:
        """Close every session; the next request starts servers afresh."""
        servers = list(self._servers.values())
        self._servers.clear()
        for handle in servers:
            await handle.aclose()

    async def aclose(self) -> None:
        """Close every session (the manager can still be used afterwards)."""
        await self.reset()

    @property
    def servers(self) -> dict[str, MCPServerHandle]:
        """The open handles by cache key (a copy)."""
        return dict(self._servers)

    def _build(self, config: McpServerConfig) -> MCPServerHandle:
        if config.type == "local":
            factory = self.registry.get(config.namespace)
            try:
                server = factory(self.shell)
            except Exception as exc:
                raise ToolError(
                    f"local server {config.namespace!r} failed to start: {describe_exception(exc)}"
                ) from exc
            return MCPServerHandle(config, server, f"local server {config.namespace!r}")
        if config.type == "http":
            target = http_target(config)
            return MCPServerHandle(config, target, f"http server {config.namespace!r} ({target.url})")
        assert config.command is not None  # McpServerConfig validates this for stdio
        params = StdioServerParameters(
            command=config.command, args=list(config.start_args), env=dict(config.env) or None, cwd=config.cwd
        )
        # The child's stderr goes to a temporary file so a start failure can quote it.
        errlog = cast(TextIO, tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
        label = f"stdio server {config.namespace!r} (command {config.command!r})"
        return MCPServerHandle(config, params, label, errlog=errlog)
