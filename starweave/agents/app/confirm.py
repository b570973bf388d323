"""The AppAgent's CONFIRM step, through the same processor pipeline as any other step.

Its action phase asks the user about the held-back actions and, approved, runs them (checked
against a fresh control list: time has passed while the user decided); refused, the subtask ends
as FAIL. Its memory phase amends the record of the step that asked. The AppAgent's logging
middleware writes the step's record; the processor hands the settled status to the agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent import (
    BaseProcessingStrategy,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    provides,
)
from starweave.agent.processor import PhaseStrategies
from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.agent import PendingActions
from starweave.agents.app.execution import execute_actions
from starweave.agents.app.processor import AppAgentProcessor
from starweave.agents.app.response import AppAgentStatus
from starweave.agents.common import confirm_strategies

if TYPE_CHECKING:
    from starweave.agents.app.agent import AppAgent

_END = ("FINISH", "FAIL")


@provides("action_info", "action", "status", "note", "result", "output", "amended_memory")
class AppConfirmedActionStrategy(BaseProcessingStrategy):
    """Ask about the held actions; run them if approved (the approval covers the first only: a
    later sensitive one is asked about in turn), else FAIL."""

    strategy_name = "app_confirmed_action"
    default_fail_fast = False

    async def execute(self, agent: AppAgent, context: ProcessingContext) -> ProcessingResult:
        """Run or refuse the held actions."""
        pending, agent.pending = agent.pending, None
        if pending is None:
            status = AppAgentStatus.CONTINUE.value
            return ProcessingResult(success=True, status=status, data={"status": status})
        first = pending.actions[0].call_string()
        info = ListActionCommandInfo()
        if await agent.confirm(first, pending.reason):
            outcome = await execute_actions(
                agent.dispatcher(context.global_context),
                pending.actions,
                pending.planned,
                planned_is_live=False,
                hold_sensitive=agent.safe_guard and not agent.auto_approve,
                approved=1,
                application=agent.app_root_name,
            )
            info = outcome.info
            ok = not outcome.stopped and not outcome.pending
            status = pending.status if ok else AppAgentStatus.CONTINUE.value
            note = f"Approved by the user: {first}."
            if outcome.pending:
                agent.pending = PendingActions(
                    list(outcome.pending),
                    outcome.pending_reason,
                    pending.status,
                    pending.result,
                    pending.planned,
                )
                status = AppAgentStatus.CONFIRM.value
                note += (
                    f" Waiting for approval of {outcome.pending[0].call_string()}: {outcome.pending_reason}."
                )
            result = pending.result if status in _END else ""
        else:
            status = AppAgentStatus.FAIL.value
            note = f"Stopped: the user did not allow {first} ({pending.reason})."
            result = note
        output = f"{note}\n{info.to_representation()}" if info.actions else note
        data: dict[str, Any] = {
            "action_info": info,
            "action": info.to_list_of_dicts(),
            "status": status,
            "note": note,
            "result": result,
            "output": output,
            "amended_memory": {"output": output, "status": status, "result": result},
        }
        return ProcessingResult(
            success=True, phase=ProcessingPhase.ACTION_EXECUTION, status=status, data=data
        )


class AppConfirmProcessor(AppAgentProcessor):
    """The CONFIRM step: ACTION_EXECUTION (the user's decision) → MEMORY_UPDATE (amend the asking
    step), with the AppAgent's middleware and status rules."""

    phase_strategies: ClassVar[PhaseStrategies] = confirm_strategies(AppConfirmedActionStrategy)
