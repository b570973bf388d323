"""The MobileAgent's FSM (spec C §2.4): CONTINUE runs the four phases; FINISH ends; FAIL moves on
to FINISH; CONFIRM asks the user about a held sensitive action (approved: it runs; refused: FAIL).
An error while CONTINUE runs turns the status into FAIL with its message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starweave.agent import AgentStateManager, SelfContainedAgentState, TerminalAgentState, run_step
from starweave.agents.mobile.response import MobileAgentStatus

if TYPE_CHECKING:
    from starweave.agent import BasicAgent, Context, ProcessorTemplate


class MobileAgentStateManager(AgentStateManager):
    """The registry of MobileAgent states."""


class MobileAgentState(SelfContainedAgentState):
    """Common behaviour: no handoff, next state from the agent's status."""

    state_manager = MobileAgentStateManager


@MobileAgentStateManager.register
class ContinueMobileAgentState(MobileAgentState):
    """Active: one step of the four-phase pipeline."""

    status = MobileAgentStatus.CONTINUE

    def processor_cls(self) -> type[ProcessorTemplate] | None:
        """The processor of this state's step (None: the agent's own)."""
        return None

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Run the processor; a kernel, model or tool error becomes FAIL with its message."""
        await run_step(agent, context, MobileAgentStatus.FAIL.value, self.processor_cls())


@MobileAgentStateManager.register
class FinishMobileAgentState(MobileAgentState, TerminalAgentState):
    """Terminal: the request is done (absorbing)."""

    status = MobileAgentStatus.FINISH


@MobileAgentStateManager.register
class FailMobileAgentState(FinishMobileAgentState):
    """Terminal: the request cannot be done; moves to FINISH for cleanup."""

    status = MobileAgentStatus.FAIL


@MobileAgentStateManager.register
class ConfirmMobileAgentState(ContinueMobileAgentState):
    """The user decides whether the held sensitive action may run, as a step of the same pipeline."""

    status = MobileAgentStatus.CONFIRM

    def processor_cls(self) -> type[ProcessorTemplate]:
        """The CONFIRM step's processor."""
        from starweave.agents.mobile.confirm import MobileConfirmProcessor

        return MobileConfirmProcessor


@MobileAgentStateManager.register_none
class NoneMobileAgentState(FinishMobileAgentState):
    """Fallback for an unknown status: ends the round."""

    @classmethod
    def name(cls) -> str:
        """Not registered; the empty status."""
        return ""
