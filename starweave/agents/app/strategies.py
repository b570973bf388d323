"""The AppAgent's LLM_INTERACTION, ACTION_EXECUTION and MEMORY_UPDATE strategies (seed 001 wiring).

The model answers with one action, or with a list when speculative multi-action is on and the agent
is not in its fallback window; the actions run through :func:`execute_actions`. A sensitive action
is held back (status CONFIRM) unless the safeguard is off or the user approved in advance.

The action phase runs the agent's guard table (guards.py, finish_guards.py) at one point: on the
proposed step before its actions run, and on a FINISH once they ran (the window is read again).
A refused step does not take effect and the model reads the note; a stopped one ends the subtask
as FAIL. A text-only model's answer names a control before its id, and an action whose name and
id disagree is not run (execution.py): that is the response format's meaning, not a guard, and
stays on with ``GUARDS: off``, like the CONFIRM safeguard.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from starweave.agent import (
    BaseProcessingStrategy,
    ContextNames,
    MemoryItem,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    depends_on,
    llm_result,
    log_request,
    present,
    provides,
    record_step,
)
from starweave.agent.guards import Decision, Verdict
from starweave.agents.app.actions import ActionCommandInfo, ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.data_strategies import step_file, window_origin
from starweave.agents.app.effect import effect_note
from starweave.agents.app.execution import execute_actions
from starweave.agents.app.guards import after_refusal, answer_schema, remember_given, remember_run
from starweave.agents.app.local import AppProcessorContext
from starweave.agents.app.response import AppAgentResponse, AppAgentStatus
from starweave.agents.app.step import RUN_WINDOW, AppStep
from starweave.agents.app.vision import Image, app_step_images
from starweave.agents.common import NO_ACTION_RUN, complete_counted, noted_output
from starweave.commands import Result, ResultStatus
from starweave.errors import ToolError

if TYPE_CHECKING:
    from starweave.agents.app.agent import AppAgent

logger = logging.getLogger(__name__)

ANSWER_TOKENS = 900
_END = (AppAgentStatus.FINISH.value, AppAgentStatus.FAIL.value)


@provides(
    "parsed_response",
    "response_text",
    "llm_cost",
    "prompt_message",
    "save_screenshot",
    "comment",
    "concat_screenshot_path",
    "plan",
    "observation",
    "last_control_screenshot_path",
    "action",
    "thought",
    # Ours, for the step log and the counters:
    "tokens",
    "llm_time",
    "multi_action",
)
class AppLLMInteractionStrategy(BaseProcessingStrategy):
    """Build the prompt (controls as text) and get a schema-valid answer."""

    strategy_name = "app_llm_interaction"

    async def execute(self, agent: AppAgent, context: ProcessingContext) -> ProcessingResult:
        """Ask the model for the next action(s)."""
        tools = await agent.action_tools(context.global_context)
        multi = agent.multi_action_enabled
        local = context.local(AppProcessorContext)
        controls = local.annotation_dict
        clean = local.clean_screenshot_path or ""
        annotated = local.annotated_screenshot_path or ""
        images: list[Image] = []
        concat = ""
        last_selected = agent.last_selected_screenshot if agent.visual.include_last_screenshot else ""
        if agent.prompter.is_visual:
            images, concat = await app_step_images(
                agent.visual, clean, annotated, last_selected, step_file(context, "_concat.png")
            )
        await agent.context_provision(str(context.get("request") or ""))
        # What the last action changed (nothing, or which texts): the controls alone do not say.
        effect = effect_note(agent.guard_state.facts.get(RUN_WINDOW), controls.values())
        messages = agent.message_constructor(
            request=str(context.get("request") or ""),
            tools=tools,
            controls=list(controls.values()),
            multi_action=multi,
            screenshot_path=annotated or clean,
            images=images,
            effect=effect,
        )
        schema = answer_schema(agent, tools, list(controls.values()), multi)
        log_request(context, {"agent": agent.name, "prompt": messages})
        completion = await complete_counted(agent, context, messages, schema, ANSWER_TOKENS)
        parsed = AppAgentResponse.model_validate(completion.parsed)
        if not multi and len(parsed.actions) > 1:
            # One action per step while falling back: the rest is planned again next step.
            parsed.actions = parsed.actions[:1]
        return llm_result(
            parsed,
            completion,
            messages,
            {
                "save_screenshot": parsed.save_screenshot.model_dump(),
                "comment": parsed.comment,
                "concat_screenshot_path": concat,
                "plan": parsed.plan,
                "observation": parsed.observation,
                "last_control_screenshot_path": last_selected if agent.prompter.is_visual else "",
                "action": [a.model_dump() for a in parsed.actions],
                "thought": parsed.thought,
            },
            {"multi_action": multi},
        )


@depends_on("parsed_response", "log_path", "session_step")
@provides(
    "execution_result",
    "action_info",
    "control_log",
    "status",
    "selected_control_screenshot_path",
    "note",
    "checked_result",
)
class AppActionExecutionStrategy(BaseProcessingStrategy):
    """Run the actions, validated against the live controls, and settle the step's status."""

    strategy_name = "app_action_execution"
    default_fail_fast = False

    async def execute(self, agent: AppAgent, context: ProcessingContext) -> ProcessingResult:
        """Execute and decide CONTINUE / FINISH / FAIL / CONFIRM / PENDING / SCREENSHOT."""
        # Until this step's picture exists, a visual model must not be shown an older step's.
        agent.last_selected_screenshot = ""
        local = context.local(AppProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        planned = local.annotation_dict
        state = agent.guard_state
        step = app_step(agent, context, parsed)
        verdict = await agent.guard_table.judge(step, state)
        remember_given(state, step.call)
        if not verdict.allowed:
            return self._refused(agent, step, verdict)
        outcome = await execute_actions(
            agent.dispatcher(context.global_context),
            parsed.actions,
            planned,
            planned_is_live=True,
            hold_sensitive=agent.safe_guard and not agent.auto_approve,
            model_asked_confirmation=parsed.status == AppAgentStatus.CONFIRM.value,
            window_rect=window_origin(context),
            application=agent.app_root_name,
            check_names=agent.check_control_names,
        )
        agent.validations += outcome.validations
        status = parsed.status
        note = ""
        checked_result = parsed.result
        if outcome.pending:
            agent.hold_for_confirmation(outcome.pending, outcome.pending_reason, parsed, planned)
            status = AppAgentStatus.CONFIRM.value
            first = outcome.pending[0].call_string()
            note = f"Waiting for the user to approve {first}: {outcome.pending_reason}."
        elif status == AppAgentStatus.CONFIRM.value:
            status = AppAgentStatus.CONTINUE.value
        if outcome.fallback:
            agent.start_fallback()
            note = f"The window changed, the remaining actions were not run ({outcome.fallback})."
        if outcome.stopped and status in _END:
            # Not every planned action ran: the model must look again before finishing.
            status = AppAgentStatus.CONTINUE.value
        remember_run(state, step, outcome.info)
        if status == AppAgentStatus.FINISH.value:
            step.info = outcome.info
            verdict = await agent.guard_table.judge(step, state)
            after_refusal(state, verdict, step)
            if verdict.decision is Decision.STOP:
                status, note, checked_result = AppAgentStatus.FAIL.value, verdict.note, verdict.note
            elif verdict.decision is Decision.REFUSE:
                status, note, checked_result = AppAgentStatus.CONTINUE.value, verdict.note, ""
        state.end_step()
        if not outcome.fallback:
            agent.end_fallback_step()
        selected_path = await selected_control_screenshot(agent, context, parsed, planned)
        agent.last_selected_screenshot = selected_path
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.ACTION_EXECUTION,
            status=status,
            data={
                "execution_result": outcome.info.get_results(),
                "action_info": outcome.info,
                "control_log": [a.target for a in outcome.info.actions if a.target],
                "status": status,
                "selected_control_screenshot_path": selected_path,
                "note": note,
                "checked_result": checked_result,
            },
        )

    @staticmethod
    def _refused(agent: AppAgent, step: AppStep, verdict: Verdict) -> ProcessingResult:
        """The step's actions are not run: the subtask ends as FAIL (a stop), or goes on."""
        after_refusal(agent.guard_state, verdict, step)
        agent.guard_state.end_step()
        failed = verdict.decision is Decision.STOP
        note = verdict.note
        status = AppAgentStatus.FAIL.value if failed else AppAgentStatus.CONTINUE.value
        info = ListActionCommandInfo()
        for action in step.actions:
            skipped = Result(status=ResultStatus.SKIPPED, error=note)
            info.add_action(
                ActionCommandInfo(function=action.function, arguments=action.arguments, result=skipped)
            )
        data = {"execution_result": [], "action_info": info, "control_log": [], "status": status}
        data.update(selected_control_screenshot_path="", note=note, checked_result=note if failed else "")
        return ProcessingResult(
            success=True, phase=ProcessingPhase.ACTION_EXECUTION, status=status, data=data
        )


def app_step(agent: AppAgent, context: ProcessingContext, parsed: AppAgentResponse) -> AppStep:
    """What the guards see of the step ``parsed`` proposes."""
    return AppStep(
        subtask=agent.subtask or str(context.get("request") or ""),
        status=parsed.status,
        actions=list(parsed.actions),
        call=parsed.call_string() if parsed.actions else "",
        result=parsed.result,
        controls=list(context.local(AppProcessorContext).annotation_dict.values()),
        memory=list(agent.memory.content[agent.subtask_start :]),
        text_only=agent.prompter.text_only,
        tools=agent.known_tools,
        dispatcher=agent.dispatcher(context.global_context),
    )


async def selected_control_screenshot(
    agent: AppAgent, context: ProcessingContext, parsed: AppAgentResponse, planned: dict[str, Control]
) -> str:
    """The clean screenshot with the first targeted control highlighted (``..._selected_controls.png``).

    Only a picture for the log: a failure is logged and the step goes on.
    """
    clean = context.local(AppProcessorContext).clean_screenshot_path or ""
    targets = [planned.get(a.control_id or "") for a in parsed.actions]
    target = next((t for t in targets if t is not None), None)
    out = step_file(context, "_selected_controls.png")
    if agent.annotator is None or not clean or target is None or out is None:
        return ""
    try:
        done = await agent.annotator(
            Path(clean), [target], out, origin=window_origin(context), selected=target.id
        )
    except (ToolError, OSError) as exc:
        logger.warning("selected-control screenshot not saved: %s", exc)
        return ""
    return str(done)


def step_memory(agent: AppAgent, context: ProcessingContext, parsed: AppAgentResponse) -> MemoryItem:
    """The memory record of one step."""
    local = context.local(AppProcessorContext)
    info = local.action_info
    output = noted_output(local.note, info.to_representation() if info.actions else NO_ACTION_RUN)
    status = str(local.status or parsed.status)
    item = MemoryItem()
    item.add_values_from_dict(
        {
            "step": int(context.get_global(ContextNames.SESSION_STEP) or 0),
            "agent_step": agent.step,
            "agent_name": agent.name,
            "application": agent.app_root_name,
            "subtask": agent.subtask,
            "observation": parsed.observation,
            "thought": parsed.thought,
            "action": info.to_list_of_dicts(),
            "action_success": info.to_list_of_dicts(success_only=True),
            "function_call": info.get_function_calls(),
            "call": parsed.call_string(),
            "status": status,
            "comment": parsed.comment,
            "result": str(local.checked_result or parsed.result) if status in _END else "",
            "output": output,
            "response": parsed.to_log(),
            # The model's own text comes back in a text-only model's next prompts (prompter.step_answer).
            "answer_text": local.response_text or "",
            "cost": local.llm_cost or 0.0,
            "tokens": local.tokens or 0,
            "screenshot": local.clean_screenshot_path or "",
            "annotated_screenshot": local.annotated_screenshot_path or "",
            "time": time.time(),
        }
    )
    return item


@depends_on("session_step", "parsed_response")
@provides("additional_memory", "memory_item", "updated_blackboard", "output", "result")
class AppMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in memory, on the shared Blackboard and in the session's counters."""

    strategy_name = "app_memory_update"
    default_fail_fast = False

    async def execute(self, agent: AppAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem and the trajectory."""
        local = context.local(AppProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        item = step_memory(agent, context, parsed)
        data = record_step(
            agent, context, item, trajectory=item.filter(agent.history_keys), structural_log=True
        )
        saved = False
        shot = local.clean_screenshot_path or ""
        if parsed.save_screenshot.save and shot:
            agent.blackboard.add_image(
                shot,
                {
                    "screenshot application": agent.app_root_name,
                    "saving reason": parsed.save_screenshot.reason,
                },
            )
            saved = True
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.MEMORY_UPDATE,
            data={
                "additional_memory": {k: data[k] for k in ("step", "agent_name", "application", "subtask")},
                "memory_item": item,
                "updated_blackboard": saved,
                "output": data["output"],
                "result": data["result"],
            },
        )
