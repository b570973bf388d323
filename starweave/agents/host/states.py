"""The HostAgent's FSM (spec C §2.4–2.5, D §23): CONTINUE, ASSIGN, FINISH, FAIL, ERROR, PENDING, CONFIRM.

CONTINUE runs the four-phase processor; a kernel error there becomes ERROR. ASSIGN creates or
reuses the AppAgent of the selected application (sharing the Blackboard) and hands over to its
CONTINUE state; a third-party agent is run to its end inside ASSIGN, after which the HostAgent
continues. FINISH, FAIL and ERROR end the round (FAIL and ERROR move on to FINISH). PENDING asks
the user and continues. CONFIRM asks about a held-back sensitive action: approved, it runs;
refused, FAIL.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starweave.agent import (
    AgentState,
    AgentStateManager,
    SelfContainedAgentState,
    TerminalAgentState,
    run_guarded,
    run_step,
)
from starweave.agents.app.states import process_step
from starweave.agents.common import PendingState
from starweave.agents.host.response import HostAgentStatus

if TYPE_CHECKING:
    from starweave.agent import BasicAgent, Context

logger = logging.getLogger(__name__)


class HostAgentStateManager(AgentStateManager):
    """The registry of HostAgent states."""


class HostAgentState(SelfContainedAgentState):
    """Common behaviour: the next state from the agent's status, no handoff, not an end."""

    state_manager = HostAgentStateManager


@HostAgentStateManager.register
class ContinueHostAgentState(HostAgentState):
    """Active: one step of the four-phase pipeline."""

    status = HostAgentStatus.CONTINUE

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Run the processor; a kernel, model or tool error becomes ERROR with its message."""
        await process_step(agent, context, HostAgentStatus.ERROR.value)


@HostAgentStateManager.register
class AssignHostAgentState(HostAgentState):
    """Hand the subtask to the selected application's AppAgent (or run a third-party agent)."""

    status = HostAgentStatus.ASSIGN

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Create or reuse the sub-agent."""
        from starweave.agents.host.agent import HostAgent

        if not isinstance(agent, HostAgent) or context is None:
            agent.status = HostAgentStatus.ERROR.value
            return
        await run_guarded(agent, context, HostAgentStatus.ERROR.value, agent.create_subagent(context))

    def next_agent(self, agent: BasicAgent) -> BasicAgent:
        """The active AppAgent, or the host itself (third-party run, or an error)."""
        active = getattr(agent, "get_active_appagent", lambda: None)()
        return active if active is not None else agent

    def next_state(self, agent: BasicAgent) -> AgentState:
        """The AppAgent's CONTINUE state, or the host's state for its status."""
        active = getattr(agent, "get_active_appagent", lambda: None)()
        if active is not None:
            state: AgentState = active.state_manager.get_state("CONTINUE")
            return state
        return super().next_state(agent)


@HostAgentStateManager.register
class FinishHostAgentState(HostAgentState, TerminalAgentState):
    """Terminal: the request is done (absorbing)."""

    status = HostAgentStatus.FINISH


@HostAgentStateManager.register
class FailHostAgentState(FinishHostAgentState):
    """Terminal: the request cannot be done; moves to FINISH."""

    status = HostAgentStatus.FAIL


@HostAgentStateManager.register
class ErrorHostAgentState(FinishHostAgentState):
    """Terminal: a system error; moves to FINISH."""

    status = HostAgentStatus.ERROR


@HostAgentStateManager.register
class PendingHostAgentState(PendingState, HostAgentState):
    """Ask the user the model's questions, record the answers on the Blackboard, continue."""

    status = HostAgentStatus.PENDING


@HostAgentStateManager.register
class ConfirmHostAgentState(HostAgentState):
    """A sensitive host action waits for the user: approved, it runs; refused, FAIL."""

    status = HostAgentStatus.CONFIRM

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Ask, then run or stop: a step of the same pipeline (HostConfirmProcessor)."""
        from starweave.agents.host.confirm import HostConfirmProcessor

        await run_step(agent, context, HostAgentStatus.ERROR.value, HostConfirmProcessor)


@HostAgentStateManager.register_none
class NoneHostAgentState(FinishHostAgentState):
    """Fallback for an unknown status: ends the round."""

    @classmethod
    def name(cls) -> str:
        """Not registered; the empty status."""
        return ""
