"""CONFIRM's step: the dangerous call the model chose goes through the same processor pipeline.

The user's decision is this step's action phase (run the pending call, or stop); its memory phase
amends the record of the step that asked, so the model's next prompt shows the call's real outcome.
The LinuxAgent's logging middleware writes the step's ``response.log`` line and console panel, and
the processor hands the settled status to the agent, as for any other step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent import ProcessingContext, provides
from starweave.agent.processor import PhaseStrategies
from starweave.agents.common import ConfirmedActionStrategy, confirm_strategies
from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.guards import failed_with_error
from starweave.agents.linux.processor import LinuxAgentProcessor
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.agents.linux.strategies import PendingAction, run_action, settle
from starweave.commands import Result

if TYPE_CHECKING:
    from starweave.agents.linux.agent import LinuxAgent

FAIL = LinuxAgentStatus.FAIL.value


@provides("results", "status", "note", "call", "result", "output", "amended_memory")
class LinuxConfirmedActionStrategy(ConfirmedActionStrategy):
    """Ask the user about the pending call; approved, it runs and the guards settle the status the
    model gave with it; refused (or nothing pending), the task ends as FAIL."""

    held_attribute = "pending_action"
    strategy_name = "linux_confirmed_action"
    nothing_held = (FAIL, "Stopped: no call was waiting for confirmation.")

    async def decide(
        self, agent: LinuxAgent, context: ProcessingContext, held: PendingAction
    ) -> tuple[str, dict[str, Any]]:
        """Run or refuse the pending call."""
        results: list[Result] = []
        if await agent.confirm(held.command_text, held.reason):
            dispatcher = context.global_context.command_dispatcher
            results = await run_action(agent, dispatcher, held.command, held.step.signature)
            outcome = await settle(agent, held.step, results, ran_call=True)
            status, result = outcome.status, outcome.result
            note = " ".join(filter(None, ["Confirmed by the user.", outcome.note]))
            output = step_output(results, outcome.note) if results else note
        else:
            status = FAIL
            note = f"Stopped: the user did not allow `{held.command_text}` ({held.reason})."
            result = output = note
        # The asking step's memory record takes the confirmed call's outcome.
        amended = {
            "output": output,
            "status": status,
            "results": [r.model_dump(mode="json") for r in results],
            "failed": bool(failed_with_error(results)),
        }
        agent.guard_state.end_step()
        data = {"results": results, "call": held.step.call, "note": note, "result": result, "output": output}
        return status, {**data, "amended_memory": amended}


class LinuxConfirmProcessor(LinuxAgentProcessor):
    """The CONFIRM step: ACTION_EXECUTION (the user's decision) → MEMORY_UPDATE (amend the asking
    step), with the LinuxAgent's middleware and status rules."""

    phase_strategies: ClassVar[PhaseStrategies] = confirm_strategies(LinuxConfirmedActionStrategy)
