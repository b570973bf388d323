"""The LinuxAgent's FSM: CONTINUE runs the processor; FINISH and FAIL end the round.

FAIL moves on to FINISH (cleanup), FINISH stays FINISH, and an unknown status falls back to the
none state, which ends the round. An error the kernel raises while CONTINUE runs (a model that
never answered in the schema, a missing dependency) turns the status into FAIL with its message,
as the reference's transition table says, instead of crashing the session.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from starweave.agent import AgentState, AgentStateManager, ContextNames
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.errors import StarweaveError

if TYPE_CHECKING:
    from starweave.agent import BasicAgent, Context

logger = logging.getLogger(__name__)


class LinuxAgentStateManager(AgentStateManager):
    """The registry of LinuxAgent states."""

    @property
    def none_state(self) -> AgentState:
        """The fallback for an unregistered status."""
        return NoneLinuxAgentState()


class LinuxAgentState(AgentState):
    """Common behaviour: no handoff, next state from the agent's status."""

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Terminal states do nothing."""

    def next_agent(self, agent: BasicAgent) -> BasicAgent:
        """A LinuxAgent never hands off."""
        return agent

    def next_state(self, agent: BasicAgent) -> AgentState:
        """The state registered for the agent's current status."""
        return LinuxAgentStateManager().get_state(agent.status)

    def is_round_end(self) -> bool:
        """Only terminal states end the round."""
        return False

    def is_subtask_end(self) -> bool:
        """Only terminal states end the subtask."""
        return False

    @classmethod
    def agent_class(cls) -> type[Any]:
        """The LinuxAgent class."""
        from starweave.agents.linux.agent import LinuxAgent

        return LinuxAgent


@LinuxAgentStateManager.register
class ContinueLinuxAgentState(LinuxAgentState):
    """Active: one step of the three-phase pipeline (LLM → action → memory)."""

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Run the processor; a kernel or model error becomes FAIL with its message."""
        try:
            await agent.process(context)
        except StarweaveError as exc:
            logger.warning("step failed: %s", exc)
            agent.status = LinuxAgentStatus.FAIL.value
            if context is not None:
                context.set(ContextNames.ERROR_MESSAGE, str(exc))
                context.set(ContextNames.ROUND_RESULT, f"Failed: {exc}")

    @classmethod
    def name(cls) -> str:
        """Registry key."""
        return LinuxAgentStatus.CONTINUE.value


@LinuxAgentStateManager.register
class FinishLinuxAgentState(LinuxAgentState):
    """Terminal: the request is done."""

    def next_state(self, agent: BasicAgent) -> AgentState:
        """FINISH is absorbing."""
        return FinishLinuxAgentState()

    def is_round_end(self) -> bool:
        """The round ends."""
        return True

    def is_subtask_end(self) -> bool:
        """The subtask ends."""
        return True

    @classmethod
    def name(cls) -> str:
        """Registry key."""
        return LinuxAgentStatus.FINISH.value


@LinuxAgentStateManager.register
class FailLinuxAgentState(FinishLinuxAgentState):
    """Terminal: the request cannot be done; moves to FINISH for cleanup."""

    @classmethod
    def name(cls) -> str:
        """Registry key."""
        return LinuxAgentStatus.FAIL.value


class NoneLinuxAgentState(FinishLinuxAgentState):
    """Fallback for an unknown status: ends the round."""

    @classmethod
    def name(cls) -> str:
        """Not registered; the empty status."""
        return ""
