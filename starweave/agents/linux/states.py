"""The LinuxAgent's FSM: CONTINUE runs the processor; CONFIRM asks the user; PENDING asks the
model's question and continues; FINISH and FAIL end.

FAIL moves on to FINISH (cleanup), FINISH stays FINISH, and an unknown status falls back to the
none state, which ends the round. An error the kernel raises while CONTINUE runs (a model that
never answered in the schema, a missing dependency) turns the status into FAIL with its message,
as the reference's transition table says, instead of crashing the session.

CONFIRM holds a dangerous call the model chose (see the action strategy): approved, it runs and
the status becomes the one the model gave with it; refused, the task ends as FAIL (the reference
ends a refused confirmation too; FAIL says truthfully that the request was not carried out).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starweave.agent import (
    AgentStateManager,
    SelfContainedAgentState,
    TerminalAgentState,
    run_step,
)
from starweave.agents.common import PendingState
from starweave.agents.linux.response import LinuxAgentStatus

if TYPE_CHECKING:
    from starweave.agent import BasicAgent, Context, ProcessorTemplate

logger = logging.getLogger(__name__)


class LinuxAgentStateManager(AgentStateManager):
    """The registry of LinuxAgent states."""


class LinuxAgentState(SelfContainedAgentState):
    """Common behaviour: no handoff, next state from the agent's status."""

    state_manager = LinuxAgentStateManager


@LinuxAgentStateManager.register
class ContinueLinuxAgentState(LinuxAgentState):
    """Active: one step of the three-phase pipeline (LLM → action → memory)."""

    status = LinuxAgentStatus.CONTINUE

    def processor_cls(self) -> type[ProcessorTemplate] | None:
        """The processor of this state's step (None: the agent's own)."""
        return None

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Run the processor; a kernel or model error becomes FAIL with its message."""
        await run_step(agent, context, LinuxAgentStatus.FAIL.value, self.processor_cls())


@LinuxAgentStateManager.register
class FinishLinuxAgentState(LinuxAgentState, TerminalAgentState):
    """Terminal: the request is done (FINISH is absorbing)."""

    status = LinuxAgentStatus.FINISH


@LinuxAgentStateManager.register
class FailLinuxAgentState(FinishLinuxAgentState):
    """Terminal: the request cannot be done; moves to FINISH for cleanup."""

    status = LinuxAgentStatus.FAIL


@LinuxAgentStateManager.register
class PendingLinuxAgentState(PendingState, LinuxAgentState):
    """The model asked the user something: ask (or say nobody can), record the pair, continue."""

    status = LinuxAgentStatus.PENDING


@LinuxAgentStateManager.register
class ConfirmLinuxAgentState(ContinueLinuxAgentState):
    """Waiting: the user decides whether the pending dangerous call may run. The decision is a step
    of the same pipeline (:class:`~starweave.agents.linux.confirm.LinuxConfirmProcessor`): its
    logging and status rules are the CONTINUE step's."""

    status = LinuxAgentStatus.CONFIRM

    def processor_cls(self) -> type[ProcessorTemplate]:
        """The CONFIRM step's processor."""
        from starweave.agents.linux.confirm import LinuxConfirmProcessor

        return LinuxConfirmProcessor


@LinuxAgentStateManager.register_none
class NoneLinuxAgentState(FinishLinuxAgentState):
    """Fallback for an unknown status: ends the round."""

    @classmethod
    def name(cls) -> str:
        """Not registered; the empty status."""
        return ""
