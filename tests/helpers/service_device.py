"""A device played in-process for service sessions: every AIP COMMAND the session sends goes over
the wire format (serialised, parsed as a device would), runs on real MCP servers, and its
COMMAND_RESULTS are handed back to the session."""

from __future__ import annotations

import asyncio
from typing import Any

from starweave.aip.messages import ClientMessage, ClientMessageType, ServerMessage, parse_server_message
from starweave.config import StarweaveConfig
from starweave.session.service_base import DeviceServiceSession
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers import register_builtin_servers


class InProcessDevice:
    """The device side of one service session; ``sent`` keeps every message it received."""

    def __init__(self, config: StarweaveConfig) -> None:
        register_builtin_servers()
        self.servers = MCPServerManager(config.system.shell)
        self.router = CommandRouter(ComputerManager(config.mcp, self.servers))
        self.sent: list[ServerMessage] = []
        self.session: DeviceServiceSession | None = None

    async def __call__(self, message: ServerMessage) -> None:
        """The session's ``send``: execute the COMMAND and answer COMMAND_RESULTS."""
        received = parse_server_message(message.model_dump_json(exclude_none=True))
        self.sent.append(received)
        results = await self.router.execute(
            received.agent_name or "LinuxAgent", None, None, received.actions or []
        )
        answer = ClientMessage(
            type=ClientMessageType.COMMAND_RESULTS,
            action_results=results,
            prev_response_id=received.response_id,
            session_id=received.session_id,
            status=received.status,
            client_id="dev1",
        )
        session = self.session
        assert session is not None, "attach the session before it runs"
        assert received.response_id is not None
        response_id = received.response_id

        def hand_back() -> Any:
            return asyncio.ensure_future(session.set_result(response_id, answer))

        asyncio.get_running_loop().call_soon(hand_back)

    async def aclose(self) -> None:
        """Stop the device's servers."""
        await self.servers.aclose()
