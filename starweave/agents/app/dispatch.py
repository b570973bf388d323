"""Route an agent's commands to its own tool set through the session's shared dispatcher.

The session has one command dispatcher; the HostAgent, each AppAgent and a third-party agent each
have their own Computer (the ``mcp.yaml`` entry of agent name, process and root). A
:class:`RoutedDispatcher` points the shared dispatcher at the agent's context for each batch,
then puts the previous routing back.
"""

from __future__ import annotations

from typing import Any

from starweave.commands import Command, Result
from starweave.commands.dispatcher import DEFAULT_TIMEOUT

_ROUTING = ("agent_name", "process_name", "root_name")


class RoutedDispatcher:
    """Sends commands through ``inner`` as ``agent_name`` on ``process_name`` / ``root_name``.

    A dispatcher without routing attributes (a remote one that routes by itself) is used as is.
    """

    def __init__(
        self, inner: Any, agent_name: str, process_name: str | None = None, root_name: str | None = None
    ) -> None:
        self.inner = inner
        self.agent_name = agent_name
        self.process_name = process_name
        self.root_name = root_name

    async def execute_commands(
        self,
        commands: list[Command],
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 (the dispatcher's signature)
    ) -> list[Result]:
        """Run ``commands`` in this agent's context."""
        routable = all(hasattr(self.inner, name) for name in _ROUTING)
        if not routable:
            return list(await self.inner.execute_commands(commands, timeout=timeout))
        previous = {name: getattr(self.inner, name) for name in _ROUTING}
        for name in _ROUTING:
            setattr(self.inner, name, getattr(self, name))
        try:
            return list(await self.inner.execute_commands(commands, timeout=timeout))
        finally:
            for name, value in previous.items():
                setattr(self.inner, name, value)


async def run_one(dispatcher: Any, tool_name: str, parameters: dict[str, Any], tool_type: str) -> Result:
    """Run one command and return its Result."""
    [result] = await dispatcher.execute_commands(
        [Command(tool_name=tool_name, parameters=parameters, tool_type=tool_type)]
    )
    return result


async def list_action_tools(dispatcher: Any) -> list[dict[str, Any]]:
    """The action tools of the agent's Computer as ``{name, description, input_schema}`` dicts."""
    result = await run_one(dispatcher, "list_tools", {"tool_type": "action"}, "action")
    infos = result.result if result.ok and isinstance(result.result, list) else []
    return [
        {
            "name": info.get("tool_name") or info.get("name"),
            "description": info.get("description") or "",
            "input_schema": info.get("input_schema") or {},
        }
        for info in infos
        if isinstance(info, dict) and (info.get("tool_name") or info.get("name"))
    ]
