"""LocalCommandDispatcher: runs Commands in this process through a CommandRouter."""

from __future__ import annotations

from typing import Protocol

from starweave.aip.tool_calls import Command, Result
from starweave.commands.dispatcher import BasicCommandDispatcher


class CommandExecutor(Protocol):
    """What the dispatcher needs of a router (``starweave.tools.CommandRouter`` fits)."""

    async def execute(
        self,
        agent_name: str,
        process_name: str | None,
        root_name: str | None,
        commands: list[Command],
        early_exit: bool = True,
    ) -> list[Result]:
        """One Result per Command, in order."""
        ...


class LocalCommandDispatcher(BasicCommandDispatcher):
    """Sends Commands to an in-process router for the current agent context (see the base class)."""

    def __init__(
        self,
        router: CommandExecutor,
        agent_name: str = "LinuxAgent",
        process_name: str | None = None,
        root_name: str | None = None,
        early_exit: bool = True,
    ) -> None:
        super().__init__(agent_name, process_name, root_name)
        self.router = router
        self.early_exit = early_exit

    async def _execute(self, commands: list[Command]) -> list[Result]:
        return await self.router.execute(
            self.agent_name, self.process_name, self.root_name, commands, early_exit=self.early_exit
        )
