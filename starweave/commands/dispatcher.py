"""BasicCommandDispatcher: the one interface strategies use to run Commands somewhere.

A dispatcher never raises: every exception, and a timeout, becomes one FAILURE Result per
command, so the agent always gets results it can reason about.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from abc import ABC, abstractmethod

from starweave.aip.tool_calls import Command, Result, ResultStatus

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 6000.0
"""Seconds allowed for one batch of commands (the reference's 100 minutes)."""


def ensure_call_ids(commands: list[Command]) -> list[Command]:
    """Give every command without one a uuid4 ``call_id`` (in place) and return the list."""
    for command in commands:
        if not command.call_id:
            command.call_id = str(uuid.uuid4())
    return commands


class BasicCommandDispatcher(ABC):
    """Runs Commands and returns one Result per Command, in order, without ever raising.

    Subclasses implement :meth:`_execute`; :meth:`execute_commands` adds the call ids, the timeout
    and the conversion of every failure into Results. ``agent_name``, ``process_name`` and
    ``root_name`` say where the commands run (they pick the Computer, the ``mcp.yaml`` entry); the
    session updates them as the agent or the application in focus changes.
    """

    def __init__(
        self, agent_name: str = "LinuxAgent", process_name: str | None = None, root_name: str | None = None
    ) -> None:
        self.agent_name = agent_name
        self.process_name = process_name
        self.root_name = root_name

    async def execute_commands(
        self,
        commands: list[Command],
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 (the reference's signature)
    ) -> list[Result]:
        """Run ``commands``; failures and a timeout come back as FAILURE Results."""
        if not commands:
            return []
        ensure_call_ids(commands)
        try:
            results = await asyncio.wait_for(self._execute(commands), timeout)
        except TimeoutError:
            return self.generate_error_results(commands, f"Command execution timed out after {timeout:g}s")
        except Exception as exc:  # the dispatcher boundary: nothing escapes to the agent
            logger.warning("command dispatch failed: %s", exc, exc_info=True)
            return self.generate_error_results(commands, f"{type(exc).__name__}: {exc}")
        if len(results) != len(commands):
            return self.generate_error_results(
                commands, f"the executor returned {len(results)} results for {len(commands)} commands"
            )
        return results

    @abstractmethod
    async def _execute(self, commands: list[Command]) -> list[Result]:
        """Run the commands (call ids are set) and return their Results in order."""

    @staticmethod
    def generate_error_results(commands: list[Command], error: object) -> list[Result]:
        """One FAILURE Result per command, carrying ``error`` and the command's call id."""
        return [
            Result(
                status=ResultStatus.FAILURE,
                error=f"Error occurred while executing command {command}: {error}",
                result=f"{error}, please retry or execute a different command.",
                call_id=command.call_id,
            )
            for command in commands
        ]
