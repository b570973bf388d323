"""LinuxAgent: the single-tier CLI agent (states CONTINUE/FINISH/FAIL, three phases)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

from starweave.agent import AgentRegistry, BasicAgent
from starweave.agents.linux.processor import LinuxAgentProcessor
from starweave.agents.linux.prompter import LinuxAgentPrompter
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.agents.linux.states import LinuxAgentStateManager

Confirmer = Callable[[str, str], Awaitable[bool]]


@AgentRegistry.register(agent_name="LinuxAgent", third_party=True, processor_cls=LinuxAgentProcessor)
class LinuxAgent(BasicAgent):
    """Carries out a request with shell and file tools, one tool call per step.

    Whoever creates it sets ``llm`` (an LLMClient); optionally ``view`` (a console view),
    ``confirmer`` (asks the user about a dangerous command) and ``auto_approve`` (``--yes``).
    """

    state_manager_cls: ClassVar[type[LinuxAgentStateManager]] = LinuxAgentStateManager
    status_enum = LinuxAgentStatus

    def __init__(
        self,
        name: str = "LinuxAgent",
        main_prompt: str | Path = "linux_agent.yaml",
        example_prompt: str | Path = "linux_agent_example.yaml",
    ) -> None:
        super().__init__(name)
        self.prompter = self.get_prompter(main_prompt, example_prompt)
        self.view: Any = None
        self.confirmer: Confirmer | None = None
        self.auto_approve = False
        self.history_keys: list[str] = ["step", "observation", "thought", "action", "status", "result"]
        self.command_timeout = 330.0
        # Loop guards (see strategies): calls already run, repeats seen, steps without an action.
        self.executed_calls: dict[str, int] = {}
        self.repeats = 0
        self.idle_steps = 0
        self.set_state(self.default_state)

    def get_prompter(self, main_prompt: str | Path, example_prompt: str | Path) -> LinuxAgentPrompter:
        """The LinuxAgent prompter over the given templates."""
        return LinuxAgentPrompter(main_prompt, example_prompt)

    def message_constructor(self, request: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """System prompt, the request, then every earlier step as chat turns."""
        system = self.prompter.system_prompt_construction(tools)
        messages = self.prompter.prompt_construction(system, self.prompter.user_prompt_construction(request))
        messages.extend(self.prompter.history_messages(self.memory.content))
        return messages

    async def confirm(self, command: str, reason: str) -> bool:
        """Ask whether a dangerous command may run; with nobody to ask, the answer is no."""
        if self.auto_approve:
            return True
        if self.confirmer is None:
            return False
        return await self.confirmer(command, reason)

    def process_confirmation(self) -> bool:
        """Sensitive actions are confirmed through :meth:`confirm` inside the action phase."""
        return self.auto_approve
