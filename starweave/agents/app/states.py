"""The AppAgent's FSM (spec C §2.4–2.5, D §16): CONTINUE, SCREENSHOT, FINISH, FAIL, PENDING, CONFIRM, ERROR.

CONTINUE and SCREENSHOT run the four-phase processor. FINISH, FAIL and ERROR end the subtask: the
state archives it on the shared Blackboard and hands control back to the HostAgent (FINISH and FAIL
to its CONTINUE state, so it decides what comes next; ERROR to its ERROR state, which ends the
round). An AppAgent without a host ends the round instead. PENDING asks the user and continues;
CONFIRM asks whether the held-back sensitive actions may run (approved: they run; refused: FAIL).
A kernel error while processing becomes ERROR.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starweave.agent import AgentState, AgentStateManager, SelfContainedAgentState, run_step
from starweave.agents.app.response import AppAgentStatus
from starweave.agents.common import PendingState

if TYPE_CHECKING:
    from starweave.agent import BasicAgent, Context

logger = logging.getLogger(__name__)

#: The AppAgent mode of ``starweave run --mode follower`` (the plan's steps are its subtask).
FOLLOWER_MODE = "follower"


class AppAgentStateManager(AgentStateManager):
    """The registry of AppAgent states."""


class AppAgentState(SelfContainedAgentState):
    """Common behaviour: the next state from the agent's status, no handoff, not an end."""

    state_manager = AppAgentStateManager


async def process_step(agent: BasicAgent, context: Context | None, error_status: str) -> None:
    """One counted pass of the agent's processor (HostAgent and AppAgent alike); a kernel, model or
    tool error sets ``error_status`` and puts its message in the context."""
    await run_step(agent, context, error_status)
    agent.step += 1


@AppAgentStateManager.register
class ContinueAppAgentState(AppAgentState):
    """Active: one step of the four-phase pipeline."""

    status = AppAgentStatus.CONTINUE

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Run the processor; a kernel, model or tool error becomes ERROR with its message."""
        await process_step(agent, context, AppAgentStatus.ERROR.value)


@AppAgentStateManager.register
class ScreenshotAppAgentState(ContinueAppAgentState):
    """Look again: the same pipeline; a second SCREENSHOT in a row counts as CONTINUE."""

    status = AppAgentStatus.SCREENSHOT

    def next_state(self, agent: BasicAgent) -> AgentState:
        """CONTINUE instead of another SCREENSHOT."""
        if agent.status == AppAgentStatus.SCREENSHOT.value:
            agent.status = AppAgentStatus.CONTINUE.value
        return super().next_state(agent)


@AppAgentStateManager.register
class FinishAppAgentState(AppAgentState):
    """The subtask is done: archive it and return to the HostAgent's CONTINUE state."""

    status = AppAgentStatus.FINISH

    host_status = "CONTINUE"

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Archive the subtask on the Blackboard and in the context."""
        from starweave.agents.app.agent import AppAgent

        if isinstance(agent, AppAgent):
            agent.archive_subtask(context, self.name())

    def next_agent(self, agent: BasicAgent) -> BasicAgent:
        """The host (sharing the Blackboard), or the agent itself when it has none."""
        host = agent.host
        if host is None:
            return agent
        host.blackboard = agent.blackboard
        host.status = self.host_status_of(agent)
        return host

    def next_state(self, agent: BasicAgent) -> AgentState:
        """The host's state for :meth:`host_status_of`, or the round's end."""
        if agent.host is None:
            return NoneAppAgentState()
        return agent.host.state_manager.get_state(self.host_status_of(agent))

    def host_status_of(self, agent: BasicAgent) -> str:
        """:attr:`host_status`; in follower mode the plan's steps are the whole request, so FINISH
        (and FAIL) end the host's round with the same status instead of returning to its CONTINUE."""
        if getattr(agent, "mode", "normal") == FOLLOWER_MODE and self.host_status == "CONTINUE":
            return self.name()
        return self.host_status

    def is_subtask_end(self) -> bool:
        """The subtask ends."""
        return True


@AppAgentStateManager.register
class FailAppAgentState(FinishAppAgentState):
    """The subtask cannot be done: archived as FAIL; the HostAgent decides what to do next."""

    status = AppAgentStatus.FAIL


@AppAgentStateManager.register
class ErrorAppAgentState(FinishAppAgentState):
    """A system error: archived; the HostAgent goes to ERROR, which ends the round."""

    status = AppAgentStatus.ERROR

    host_status = "ERROR"


@AppAgentStateManager.register
class PendingAppAgentState(PendingState, AppAgentState):
    """The model needs the user: ask, record the answer on the Blackboard, continue."""

    status = AppAgentStatus.PENDING


@AppAgentStateManager.register
class ConfirmAppAgentState(AppAgentState):
    """Sensitive actions wait: approved, they run (checked against the window first); refused, FAIL."""

    status = AppAgentStatus.CONFIRM

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Ask the user, then run or stop: a step of the same pipeline (AppConfirmProcessor)."""
        from starweave.agents.app.confirm import AppConfirmProcessor

        await run_step(agent, context, AppAgentStatus.ERROR.value, AppConfirmProcessor)


@AppAgentStateManager.register_none
class NoneAppAgentState(AppAgentState):
    """Fallback for an unknown status, and the end of a hostless AppAgent: ends the round."""

    status = ""

    def next_state(self, agent: BasicAgent) -> AgentState:
        """Absorbing."""
        return self

    def is_round_end(self) -> bool:
        """The round ends."""
        return True
