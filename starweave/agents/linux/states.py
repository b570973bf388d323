"""The LinuxAgent's FSM: CONTINUE runs the processor; CONFIRM asks the user; FINISH and FAIL end.

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
from typing import TYPE_CHECKING, Any

from starweave.agent import (
    AgentState,
    AgentStateManager,
    ContextNames,
    SelfContainedAgentState,
    TerminalAgentState,
    record_failure,
)
from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.commands import Result
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


class LinuxAgentState(SelfContainedAgentState):
    """Common behaviour: no handoff, next state from the agent's status."""

    state_manager = LinuxAgentStateManager

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
            logger.info("step failed: %s", exc)
            record_failure(agent, context, LinuxAgentStatus.FAIL.value, str(exc))

    @classmethod
    def name(cls) -> str:
        """Registry key."""
        return LinuxAgentStatus.CONTINUE.value


@LinuxAgentStateManager.register
class FinishLinuxAgentState(LinuxAgentState, TerminalAgentState):
    """Terminal: the request is done (FINISH is absorbing)."""

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


@LinuxAgentStateManager.register
class ConfirmLinuxAgentState(LinuxAgentState):
    """Waiting: the user decides whether the pending dangerous call may run."""

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Ask, then run the call or stop."""
        from starweave.agents.linux.agent import LinuxAgent
        from starweave.agents.linux.strategies import run_action, settle

        if not isinstance(agent, LinuxAgent) or agent.pending_action is None or context is None:
            agent.status = LinuxAgentStatus.FAIL.value
            return
        pending = agent.pending_action
        agent.pending_action = None
        results: list[Result] = []
        guard_note = ""
        if await agent.confirm(pending.command_text, pending.reason):
            results = await run_action(agent, context.command_dispatcher, pending.command, pending.signature)
            request = str(context.get(ContextNames.REQUEST) or "")
            outcome = settle(agent, request, pending.status, pending.result, results, ran_call=True)
            agent.status = outcome.status
            guard_note = outcome.note
            note = " ".join(filter(None, ["Confirmed by the user.", guard_note]))
            result = outcome.result
        else:
            agent.status = LinuxAgentStatus.FAIL.value
            note = f"Stopped: the user did not allow `{pending.command_text}` ({pending.reason})."
            result = note
        output = step_output(results, pending.command_text, guard_note) if results else note
        if result:
            context.set(ContextNames.ROUND_RESULT, result)
        latest = agent.memory.get_latest_item()
        if latest is not None:
            # The model's next prompt shows this step's real outcome, not "waiting for confirmation".
            latest.set_value("output", output)
            latest.set_value("status", agent.status)
            latest.set_value("results", [r.model_dump(mode="json") for r in results])
            latest.set_value("failed", bool(results) and not all(r.ok for r in results))
        record = {
            "step": context.get(ContextNames.SESSION_STEP),
            "agent_type": "LinuxAgent",
            "agent_name": agent.name,
            "status": agent.status,
            "call": pending.call,
            "note": note,
            "result": result,
            "output": output,
            "results": [r.model_dump(mode="json") for r in results],
        }
        writer = context.get(ContextNames.LOGGER)
        if writer is not None:
            writer.write(record)
        if agent.view is not None:
            agent.view.step(record, output)

    @classmethod
    def name(cls) -> str:
        """Registry key."""
        return LinuxAgentStatus.CONFIRM.value


class NoneLinuxAgentState(FinishLinuxAgentState):
    """Fallback for an unknown status: ends the round."""

    @classmethod
    def name(cls) -> str:
        """Not registered; the empty status."""
        return ""
