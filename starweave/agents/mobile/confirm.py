"""The MobileAgent's CONFIRM step: the user's decision on the held sensitive action, through the same
processor pipeline (its memory phase amends the record of the step that asked)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent import ProcessingContext, provides
from starweave.agent.processor import PhaseStrategies
from starweave.agents.common import ConfirmedActionStrategy, confirm_strategies
from starweave.agents.mobile import tools
from starweave.agents.mobile.processor import MobileAgentProcessor
from starweave.agents.mobile.safety import target_moved
from starweave.agents.mobile.strategies import (
    CONTINUE,
    FAIL,
    PendingMobileAction,
    run_mobile_action,
    step_output,
)

if TYPE_CHECKING:
    from starweave.agents.mobile.agent import MobileAgent


async def screen_moved(dispatcher: Any, held: PendingMobileAction) -> str:
    """Why the held action no longer aims where the user approved it ("" when it still does): the
    controls are read afresh (the user may have taken minutes), and its target must be unchanged."""
    if held.target is None:
        return ""
    result = await tools.collect(dispatcher, tools.SCREEN_CONTROLS, {"force_refresh": True})
    if not result.ok:
        return f"the controls could not be read again: {result.error}"
    command, now = held.command, tools.controls_of(result)
    return target_moved(command.tool_name, command.parameters or {}, held.target, now)


@provides("execution_result", "status", "note", "call", "result", "output", "amended_memory")
class MobileConfirmedActionStrategy(ConfirmedActionStrategy):
    """Approved, the held action runs and keeps the model's status, unless the screen changed under
    its target meanwhile (then CONTINUE with a note, not run); refused, the task FAILs and the
    action is not run."""

    held_attribute = "pending"
    strategy_name = "mobile_confirmed_action"
    nothing_held = (FAIL, "Stopped: no action was waiting for confirmation.")

    async def decide(
        self, agent: MobileAgent, context: ProcessingContext, held: PendingMobileAction
    ) -> tuple[str, dict[str, Any]]:
        """Run or refuse the held action."""
        dispatcher = context.global_context.command_dispatcher
        if await agent.confirm(held.call, held.reason):
            moved = await screen_moved(dispatcher, held)
            if moved:
                status, results, result = CONTINUE, [], ""
                note = (
                    f"Confirmed by the user, but not run: the screen changed while waiting ({moved}). "
                    "Look at the screen again and choose the action anew."
                )
            else:
                outcome = await run_mobile_action(agent, dispatcher, held)
                note = " ".join(filter(None, ["Confirmed by the user.", outcome.note]))
                status, result, results = outcome.status, outcome.result, outcome.results
        else:
            status, results = FAIL, []
            note = result = f"Stopped: the user did not allow {held.call} ({held.reason})."
        output = step_output(results, note)
        data = {
            "execution_result": results,
            "call": held.call,
            "note": note,
            "result": result,
            "output": output,
        }
        return status, {**data, "amended_memory": {"output": output, "status": status, "result": result}}


class MobileConfirmProcessor(MobileAgentProcessor):
    """The CONFIRM step: ACTION_EXECUTION (the user's decision) → MEMORY_UPDATE (amend the asking step)."""

    phase_strategies: ClassVar[PhaseStrategies] = confirm_strategies(MobileConfirmedActionStrategy)
