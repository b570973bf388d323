"""The ConstellationAgent's FSM: START → CONTINUE ⇄ (START) → FINISH | FAIL (spec B §5.2, E §6.2).

START builds the constellation (creation mode) and launches its orchestration as a background task;
CONTINUE waits (with a timeout) for task completion events, batches all that are queued into one
editing call and decides the next status; FINISH and FAIL are terminal. Unlike the reference, nothing
waits without a bound, an invalid DAG is never orchestrated, and an orchestration that ended (or
crashed) while the agent waits is noticed instead of blocking forever.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starweave.agent import (
    AgentStateManager,
    ContextNames,
    SelfContainedAgentState,
    TerminalAgentState,
    record_failure,
)
from starweave.errors import StarweaveError
from starweave.galaxy.agent.merge import all_succeeded
from starweave.galaxy.agent.response import ConstellationAgentStatus, WeavingMode

if TYPE_CHECKING:
    from starweave.agent import BasicAgent, Context
    from starweave.galaxy.agent.agent import ConstellationAgent

logger = logging.getLogger(__name__)


class ConstellationAgentStateManager(AgentStateManager):
    """The registry of ConstellationAgent states; an unknown status falls back to START."""


class ConstellationAgentState(SelfContainedAgentState):
    """Shared behaviour: no handoff, next state from the agent's status."""

    state_manager = ConstellationAgentStateManager


def fail(agent: ConstellationAgent, context: Context | None, message: str) -> None:
    """End in FAIL with ``message`` (also put in the context's ERROR_MESSAGE and ROUND_RESULT)."""
    logger.error("ConstellationAgent failed: %s", message)
    agent.error_message = message
    record_failure(agent, context, ConstellationAgentStatus.FAIL.value, message)


async def guarded(
    agent: ConstellationAgent,
    context: Context | None,
    doing: str,
    work: Callable[[], Awaitable[None]],
    timeout_reason: str = "",
) -> None:
    """Run a state's ``work``; any error ends in FAIL with its reason (spec: an error in START or
    CONTINUE ends the task in FAIL, never the session). ``doing`` names the work for the message;
    ``timeout_reason``, if given, is the reason of a TimeoutError."""
    try:
        await work()
    except StarweaveError as exc:
        fail(agent, context, str(exc))
    except Exception as exc:  # the spec's catch-all; the traceback is kept in the log
        if timeout_reason and isinstance(exc, TimeoutError):
            fail(agent, context, timeout_reason)
            return
        logger.exception("Unexpected error while %s", doing)
        fail(agent, context, f"Unexpected error while {doing}: {exc!r}")


@ConstellationAgentStateManager.register_none
@ConstellationAgentStateManager.register
class StartConstellationAgentState(ConstellationAgentState):
    """Create the constellation if there is none, then launch its orchestration (non-blocking)."""

    status = ConstellationAgentStatus.START

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Creation (first time) and orchestration launch; any error ends in FAIL."""
        cagent: ConstellationAgent = agent  # type: ignore[assignment]
        if cagent.status in (ConstellationAgentStatus.FINISH.value, ConstellationAgentStatus.FAIL.value):
            return

        async def start() -> None:
            timing_info: dict[str, Any] = {}
            if cagent.current_constellation is None:
                if context is not None:
                    context.set(ContextNames.WEAVING_MODE, WeavingMode.CREATION.value)
                _, timing_info = await cagent.process_creation(context)
            if cagent.status in (ConstellationAgentStatus.FINISH.value, ConstellationAgentStatus.FAIL.value):
                return
            if cagent.current_constellation is None:
                fail(cagent, context, cagent.error_message or "The model planned no constellation to run")
                return
            cagent.launch_orchestration(timing_info)
            cagent.status = ConstellationAgentStatus.CONTINUE.value

        await guarded(cagent, context, "creating the constellation", start)


@ConstellationAgentStateManager.register
class ContinueConstellationAgentState(ConstellationAgentState):
    """Wait for completion events (bounded), edit once for the whole batch, decide the next status."""

    status = ConstellationAgentStatus.CONTINUE

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """One editing round; an error or a timeout ends in FAIL with its reason."""
        cagent: ConstellationAgent = agent  # type: ignore[assignment]
        if context is not None:
            context.set(ContextNames.WEAVING_MODE, WeavingMode.EDITING.value)

        async def review() -> None:
            events = await cagent.wait_for_completion_events()
            if not events:
                handle_no_events(cagent, context)
                return
            task_ids = [str(getattr(e, "task_id", "")) for e in events]
            logger.info("Reviewing the constellation after %s", task_ids)
            await cagent.process_editing(context, task_ids=task_ids)

        stuck = (
            f"No task finished within {cagent.continue_timeout:g} s while the constellation was "
            "running; the devices or the orchestration may be stuck. Check the devices, or raise "
            "the ConstellationAgent's continue_timeout for long tasks."
        )
        await guarded(cagent, context, "editing the constellation", review, stuck)


@ConstellationAgentStateManager.register
class FinishConstellationAgentState(ConstellationAgentState, TerminalAgentState):
    """Terminal: the request is done; absorbing (FAIL stays FAIL too)."""

    status = ConstellationAgentStatus.FINISH

    finish_status = None

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Log the outcome."""
        logger.info("Galaxy task completed successfully")


@ConstellationAgentStateManager.register
class FailConstellationAgentState(FinishConstellationAgentState):
    """Terminal: the request failed."""

    status = ConstellationAgentStatus.FAIL

    async def handle(self, agent: BasicAgent, context: Context | None = None) -> None:
        """Log the outcome."""
        logger.info("Galaxy task failed")


def handle_no_events(agent: ConstellationAgent, context: Context | None) -> None:
    """The orchestration ended with no event left: finish, relaunch or fail instead of waiting."""
    error = agent.orchestration_error()
    if error is not None:
        fail(agent, context, f"The orchestration stopped with an error: {error}")
        return
    constellation = agent.current_constellation
    if constellation is None:
        fail(agent, context, "The orchestration ended but there is no constellation")
    elif not constellation.is_complete():
        logger.info("Orchestration ended with tasks left; relaunching it")
        agent.status = ConstellationAgentStatus.START.value
    elif all_succeeded(constellation):
        logger.warning("Every task completed but the model did not say FINISH; finishing")
        agent.status = ConstellationAgentStatus.FINISH.value
    else:
        failed = [t.task_id for t in constellation.get_all_tasks() if t.status.value != "completed"]
        fail(
            agent,
            context,
            f"The constellation ended with unfinished tasks {failed} and no edit to fix them",
        )
