"""The HostAgent's CONFIRM step, through the same processor pipeline as any other step.

Its action phase asks the user about the held sensitive action and, approved, runs it; refused,
the round ends as FAIL. Its memory phase amends the record of the step that asked. The HostAgent's
logging middleware writes the step's record; the processor hands the settled status to the agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent import ContextNames, ProcessingContext, provides
from starweave.agent.processor import PhaseStrategies
from starweave.agents.app.actions import ActionCommandInfo
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.safety import ask_confirmation
from starweave.agents.common import ConfirmedActionStrategy, confirm_strategies
from starweave.agents.host.processor import HostAgentProcessor
from starweave.agents.host.response import HostAgentStatus

if TYPE_CHECKING:
    from starweave.agents.host.agent import HeldAction, HostAgent


@provides("action_info", "status", "note", "output", "amended_memory")
class HostConfirmedActionStrategy(ConfirmedActionStrategy):
    """Ask about the held action; run it if approved (its status is the model's, CONTINUE for
    CONFIRM and ASSIGN), else FAIL with the refusal as the round's result."""

    held_attribute = "held"
    strategy_name = "host_confirmed_action"

    async def decide(
        self, agent: HostAgent, context: ProcessingContext, held: HeldAction
    ) -> tuple[str, dict[str, Any]]:
        """Run or refuse the held action."""
        response = held.response
        call = response.call_string()
        data: dict[str, Any] = {}
        amended: dict[str, Any] = {}
        if await ask_confirmation(agent.confirmer, agent.auto_approve, agent.safe_guard, call, held.reason):
            glob = context.global_context
            result = await run_one(agent.dispatcher(glob), response.function, response.arguments, "action")
            wanted = response.status
            status = wanted if wanted not in ("CONFIRM", "ASSIGN") else HostAgentStatus.CONTINUE.value
            info = ActionCommandInfo(function=response.function, arguments=response.arguments, result=result)
            # The outcome in full (a launched program's pid and window), as a CONTINUE step shows it.
            note = f"Approved by the user: {info.to_representation()}"
            data["action_info"] = info
            amended["action"] = [info.model_dump(mode="json")]
        else:
            status = HostAgentStatus.FAIL.value
            note = f"Stopped: the user did not allow {call} ({held.reason})."
            context.global_context.set(ContextNames.ROUND_RESULT, note)
        amended = {"output": note, "status": status, **amended}
        return status, {**data, "note": note, "output": note, "amended_memory": amended}


class HostConfirmProcessor(HostAgentProcessor):
    """The CONFIRM step: ACTION_EXECUTION (the user's decision) → MEMORY_UPDATE (amend the asking
    step), with the HostAgent's middleware and status rules."""

    phase_strategies: ClassVar[PhaseStrategies] = confirm_strategies(HostConfirmedActionStrategy)
