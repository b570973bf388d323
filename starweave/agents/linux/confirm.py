"""CONFIRM's step: the dangerous call the model chose goes through the same processor pipeline.

The user's decision is this step's action phase (run the pending call, or stop); its memory phase
amends the record of the step that asked, so the model's next prompt shows the call's real outcome.
The LinuxAgent's logging middleware writes the step's ``response.log`` line and console panel, and
the processor hands the settled status to the agent, as for any other step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from starweave.agent import (
    BaseProcessingStrategy,
    ContextNames,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    provides,
)
from starweave.agent.processor import PhaseStrategies
from starweave.agents.common import confirm_strategies
from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.processor import LinuxAgentProcessor
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.agents.linux.strategies import run_action, settle
from starweave.commands import Result

if TYPE_CHECKING:
    from starweave.agents.linux.agent import LinuxAgent

FAIL = LinuxAgentStatus.FAIL.value


@provides("results", "status", "note", "call", "result", "output", "amended_memory")
class LinuxConfirmedActionStrategy(BaseProcessingStrategy):
    """Ask the user about the pending call; approved, it runs and the guards settle the status the
    model gave with it; refused (or nothing pending), the task ends as FAIL."""

    strategy_name = "linux_confirmed_action"
    default_fail_fast = False

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Run or refuse the pending call."""
        pending, agent.pending_action = agent.pending_action, None
        if pending is None:
            note = "Stopped: no call was waiting for confirmation."
            return self._result(FAIL, {"note": note, "result": note, "output": note})
        results: list[Result] = []
        if await agent.confirm(pending.command_text, pending.reason):
            dispatcher = context.global_context.command_dispatcher
            results = await run_action(agent, dispatcher, pending.command, pending.signature)
            request = str(context.get_global(ContextNames.REQUEST) or "")
            outcome = settle(agent, request, pending.status, pending.result, results, ran_call=True)
            status, result = outcome.status, outcome.result
            note = " ".join(filter(None, ["Confirmed by the user.", outcome.note]))
            output = step_output(results, pending.command_text, outcome.note) if results else note
        else:
            status = FAIL
            note = f"Stopped: the user did not allow `{pending.command_text}` ({pending.reason})."
            result = output = note
        data: dict[str, object] = {
            "results": results,
            "call": pending.call,
            "note": note,
            "result": result,
            "output": output,
            # The asking step's memory record takes the confirmed call's outcome.
            "amended_memory": {
                "output": output,
                "status": status,
                "results": [r.model_dump(mode="json") for r in results],
                "failed": bool(results) and not all(r.ok for r in results),
            },
        }
        return self._result(status, data)

    @staticmethod
    def _result(status: str, data: dict[str, object]) -> ProcessingResult:
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.ACTION_EXECUTION,
            status=status,
            data={**data, "status": status},
        )


class LinuxConfirmProcessor(LinuxAgentProcessor):
    """The CONFIRM step: ACTION_EXECUTION (the user's decision) → MEMORY_UPDATE (amend the asking
    step), with the LinuxAgent's middleware and status rules."""

    phase_strategies: ClassVar[PhaseStrategies] = confirm_strategies(LinuxConfirmedActionStrategy)
