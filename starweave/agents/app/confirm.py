"""The AppAgent's CONFIRM step, through the same processor pipeline as any other step.

Its action phase asks the user about the held-back actions and, approved, runs them (checked
against a fresh control list: time has passed while the user decided); refused, the subtask ends
as FAIL. Its memory phase amends the record of the step that asked. The AppAgent's logging
middleware writes the step's record; the processor hands the settled status to the agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent import ProcessingContext, provides
from starweave.agent.processor import PhaseStrategies
from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.agent import PendingActions
from starweave.agents.app.execution import execute_actions
from starweave.agents.app.processor import AppAgentProcessor
from starweave.agents.app.response import AppAgentStatus
from starweave.agents.common import ConfirmedActionStrategy, confirm_strategies

if TYPE_CHECKING:
    from starweave.agents.app.agent import AppAgent

_END = ("FINISH", "FAIL")


@provides("action_info", "action", "status", "note", "result", "output", "amended_memory")
class AppConfirmedActionStrategy(ConfirmedActionStrategy):
    """Ask about the held actions; run them if approved (the approval covers the first only: a
    later sensitive one is asked about in turn), else FAIL."""

    held_attribute = "pending"
    strategy_name = "app_confirmed_action"

    async def decide(
        self, agent: AppAgent, context: ProcessingContext, held: PendingActions
    ) -> tuple[str, dict[str, Any]]:
        """Run or refuse the held actions."""
        first = held.actions[0].call_string()
        info = ListActionCommandInfo()
        if await agent.confirm(first, held.reason):
            outcome = await execute_actions(
                agent.dispatcher(context.global_context),
                held.actions,
                held.planned,
                planned_is_live=False,
                hold_sensitive=agent.safe_guard and not agent.auto_approve,
                approved=1,
                application=agent.app_root_name,
            )
            info = outcome.info
            ok = not outcome.stopped and not outcome.pending
            status = held.status if ok else AppAgentStatus.CONTINUE.value
            note = f"Approved by the user: {first}."
            if outcome.pending:
                reason = outcome.pending_reason
                agent.pending = PendingActions(
                    list(outcome.pending), reason, held.status, held.result, held.planned
                )
                status = AppAgentStatus.CONFIRM.value
                note += f" Waiting for approval of {outcome.pending[0].call_string()}: {reason}."
            result = held.result if status in _END else ""
        else:
            status = AppAgentStatus.FAIL.value
            note = f"Stopped: the user did not allow {first} ({held.reason})."
            result = note
        output = f"{note}\n{info.to_representation()}" if info.actions else note
        data = {"action_info": info, "action": info.to_list_of_dicts(), "note": note, "result": result}
        amended = {"output": output, "status": status, "result": result}
        return status, {**data, "output": output, "amended_memory": amended}


class AppConfirmProcessor(AppAgentProcessor):
    """The CONFIRM step: ACTION_EXECUTION (the user's decision) → MEMORY_UPDATE (amend the asking
    step), with the AppAgent's middleware and status rules."""

    phase_strategies: ClassVar[PhaseStrategies] = confirm_strategies(AppConfirmedActionStrategy)
