"""WebSocketCommandDispatcher: the server side of remote execution.

Commands leave as one AIP ``COMMAND`` message; the device answers with ``COMMAND_RESULTS`` whose
``prev_response_id`` names our ``response_id``, and the WebSocket handler hands it to
:meth:`set_result`, which resolves the waiting future. The agent code is the same as with the
local dispatcher: only this class knows the commands travel.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starweave.aip.builders import command_message
from starweave.aip.messages import ClientMessage, ServerMessage, new_id
from starweave.aip.tool_calls import Command, Result, ResultStatus
from starweave.commands.dispatcher import BasicCommandDispatcher

logger = logging.getLogger(__name__)

SendFn = Callable[[ServerMessage], Awaitable[None]]


class WebSocketCommandDispatcher(BasicCommandDispatcher):
    """Sends Commands to a device over AIP and waits for its results.

    ``send`` delivers a ServerMessage to the device's connection. A timeout or a send failure
    becomes FAILURE Results, never an exception; when the device disconnects, the server cancels
    the whole session, which interrupts the wait at once.
    """

    def __init__(
        self,
        send: SendFn,
        session_id: str,
        task_name: str | None = None,
        agent_name: str = "LinuxAgent",
        process_name: str | None = None,
        root_name: str | None = None,
    ) -> None:
        super().__init__(agent_name, process_name, root_name)
        self.send = send
        self.session_id = session_id
        self.task_name = task_name
        self.pending: dict[str, asyncio.Future[list[Result]]] = {}

    def make_server_response(self, commands: list[Command], response_id: str | None = None) -> ServerMessage:
        """The COMMAND message carrying ``commands`` (call ids already set)."""
        return command_message(
            commands,
            self.session_id,
            response_id,
            agent_name=self.agent_name,
            process_name=self.process_name,
            root_name=self.root_name,
            task_name=self.task_name,
        )

    async def _execute(self, commands: list[Command]) -> list[Result]:
        response_id = new_id()
        future: asyncio.Future[list[Result]] = asyncio.get_running_loop().create_future()
        self.pending[response_id] = future
        try:
            await self.send(self.make_server_response(commands, response_id))
            results = await future
        finally:
            # Also on timeout or cancellation: a late answer must not find a stale future.
            self.pending.pop(response_id, None)
        return _align(commands, results)

    async def set_result(self, response_id: str, message: ClientMessage) -> bool:
        """Deliver a device's COMMAND_RESULTS; False when nothing waits for ``response_id``."""
        future = self.pending.get(response_id)
        if future is None or future.done():
            logger.warning("results for unknown or finished command batch %s dropped", response_id)
            return False
        future.set_result(list(message.action_results or []))
        return True


def _align(commands: list[Command], results: list[Result]) -> list[Result]:
    """One result per command, in command order: matched by call id when the device sent them."""
    by_id = {r.call_id: r for r in results if r.call_id}
    ids = [c.call_id for c in commands]
    if by_id and all(i is not None and i in by_id for i in ids):
        return [by_id[i] for i in ids if i is not None]
    aligned = list(results[: len(commands)])
    for command in commands[len(aligned) :]:
        aligned.append(
            Result(
                status=ResultStatus.FAILURE,
                error="the device returned no result for this command",
                call_id=command.call_id,
            )
        )
    return aligned
