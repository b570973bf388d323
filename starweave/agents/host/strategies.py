"""The HostAgent's four phase strategies (seed 002 wiring): list the desktop, ask the model, select the
target (or launch/close an application), remember the step.

The action phase runs the agent's guard table (``guards.py``) at one point: on the step as it would
take effect, once a selected target would receive the subtask (ASSIGN) and before any other host
tool runs; then it closes the step (``GuardState.end_step``). A refusal makes the step CONTINUE with
the note; ``stop`` ends the round as FAIL and ``finish`` as FINISH, with the note as its result.
A sensitive host tool waits for the user (CONFIRM) whether or not the guards are on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
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
from starweave.agent.guards import Decision
from starweave.agents.app.actions import ActionCommandInfo
from starweave.agents.app.data_strategies import capture, step_file
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.safety import sensitive_reason
from starweave.agents.app.vision import DESKTOP
from starweave.agents.common import NO_ACTION_RUN, complete_counted, noted_output
from starweave.agents.host.guards import HostStep
from starweave.agents.host.local import HostProcessorContext
from starweave.agents.host.response import (
    SELECT_APPLICATION_COMMAND,
    HostAgentResponse,
    HostAgentStatus,
    response_json_schema,
)
from starweave.agents.host.targets import (
    TargetInfo,
    TargetKind,
    TargetRegistry,
    third_party_targets,
    window_targets,
)
from starweave.commands import Result, ResultStatus
from starweave.errors import ToolError

if TYPE_CHECKING:
    from starweave.agents.host.agent import HostAgent

ANSWER_TOKENS = 900
_ROUND_END = (HostAgentStatus.FINISH.value, HostAgentStatus.FAIL.value)
#: The status a guard's final verdict ends the round with.
_VERDICT_STATUS = {Decision.STOP: HostAgentStatus.FAIL.value, Decision.FINISH: HostAgentStatus.FINISH.value}


@dataclass
class HostOutcome:
    """What the action phase settled: the status, a note for the model, the tool's result, the
    selected target, and whether the note is the round's result (a guard ended the round)."""

    status: str
    note: str
    result: Result
    target: TargetInfo | None = None
    settled: bool = False


@depends_on("command_dispatcher", "log_path", "session_step")
@provides(
    "desktop_screenshot_url",
    "desktop_screenshot_path",
    "application_windows_info",
    "target_registry",
    "target_info_list",
)
class DesktopDataCollectionStrategy(BaseProcessingStrategy):
    """Desktop screenshot (optional input, kept in the log) and the open windows plus third-party agents."""

    strategy_name = "desktop_data_collection"

    async def execute(self, agent: HostAgent, context: ProcessingContext) -> ProcessingResult:
        """Collect the targets."""
        dispatcher = agent.dispatcher(context.global_context)
        path, url = await capture(
            dispatcher, "capture_desktop_screenshot", {"all_screens": True}, step_file(context, ".png")
        )
        listing = await run_one(
            dispatcher,
            "get_desktop_app_info",
            {"remove_empty": True, "refresh_app_windows": True},
            "data_collection",
        )
        if not listing.ok:
            raise ToolError(f"cannot list the application windows: {listing.error or listing.result}")
        windows = window_targets(listing.result)
        registry = context.local(HostProcessorContext).target_registry or TargetRegistry()
        registry.register(windows)
        registry.register(third_party_targets(agent.third_party_agents, len(windows)))
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.DATA_COLLECTION,
            data={
                "desktop_screenshot_url": url,
                "desktop_screenshot_path": path,
                "application_windows_info": [w.model_dump() for w in windows],
                "target_registry": registry,
                "target_info_list": [t.model_dump() for t in registry.all()],
            },
        )


@depends_on("target_info_list", "desktop_screenshot_url")
@provides(
    "parsed_response",
    "response_text",
    "llm_cost",
    "prompt_message",
    "subtask",
    "plan",
    "result",
    "host_message",
    "status",
    "question_list",
    "function_name",
    "function_arguments",
    # Ours, for the step log and the counters:
    "tokens",
    "llm_time",
)
class HostLLMInteractionStrategy(BaseProcessingStrategy):
    """Ask the model which target gets the next subtask (or whether the request is done)."""

    strategy_name = "host_llm_interaction"

    async def execute(self, agent: HostAgent, context: ProcessingContext) -> ProcessingResult:
        """Build the prompt and parse the answer."""
        local = context.local(HostProcessorContext)
        targets = [TargetInfo.model_validate(t) for t in local.target_info_list or []]
        tools = await agent.action_tools(context.global_context)
        desktop_url = local.desktop_screenshot_url or ""
        agent.guard_state.begin(str(context.get("request") or ""))
        await agent.context_provision(str(context.get("request") or ""))
        messages = agent.message_constructor(
            request=str(context.get("request") or ""),
            targets=targets,
            tools=tools,
            previous_subtasks=list(context.get_global(ContextNames.PREVIOUS_SUBTASKS) or []),
            screenshot_path=local.desktop_screenshot_path or "",
            images=[(DESKTOP, desktop_url)] if agent.prompter.is_visual and desktop_url else [],
        )
        schema = response_json_schema(tools, [t.id for t in targets])
        log_request(context, {"agent": agent.name, "prompt": messages})
        completion = await complete_counted(agent, context, messages, schema, ANSWER_TOKENS)
        parsed = HostAgentResponse.model_validate(completion.parsed)
        return llm_result(
            parsed,
            completion,
            messages,
            {
                "subtask": parsed.current_subtask,
                "plan": parsed.plan,
                "result": parsed.result,
                "host_message": parsed.message,
                "status": parsed.status,
                "question_list": parsed.questions,
                "function_name": parsed.function,
                "function_arguments": parsed.arguments,
            },
        )


def last_subtask_result(context: ProcessingContext) -> str:
    """The result of the round's last finished subtask ("" when none finished)."""
    records = context.get_global(ContextNames.PREVIOUS_SUBTASKS) or []
    return next((str(r.get("result") or "") for r in reversed(records) if r.get("status") == "FINISH"), "")


def _failure(message: str) -> Result:
    return Result(status=ResultStatus.FAILURE, error=message)


@depends_on("target_registry", "command_dispatcher")
@provides(
    "execution_result",
    "action_info",
    "selected_target_id",
    "selected_application_root",
    "assigned_third_party_agent",
    "target",
    "status",
    "note",
)
class HostActionExecutionStrategy(BaseProcessingStrategy):
    """Select the target (window or third-party agent) or run another host tool; settle the status."""

    strategy_name = "host_action_execution"
    default_fail_fast = False

    async def execute(self, agent: HostAgent, context: ProcessingContext) -> ProcessingResult:
        """Execute the answer's function."""
        local = context.local(HostProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        registry = present(local.target_registry, "target_registry")
        settled = await self._run(agent, context, parsed, registry)
        agent.guard_state.end_step()
        status, note, result, target = settled.status, settled.note, settled.result, settled.target
        if status in _ROUND_END:
            outcome = note if settled.settled else parsed.result or note
            if not outcome and status == HostAgentStatus.FINISH.value:
                outcome = last_subtask_result(context)
            context.global_context.set(ContextNames.ROUND_RESULT, outcome)
        info = ActionCommandInfo(
            function=parsed.function,
            arguments=parsed.arguments,
            target=target.model_dump() if target else None,
            status=status,
            result=result,
        )
        selected = agent.selection
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.ACTION_EXECUTION,
            status=status,
            data={
                "execution_result": [result],
                "action_info": info,
                "selected_target_id": target.id if target else "",
                "selected_application_root": selected.root_name
                if selected and not selected.third_party
                else "",
                "assigned_third_party_agent": selected.name if selected and selected.third_party else "",
                "target": target.model_dump() if target else {},
                "status": status,
                "note": note,
            },
        )

    async def _run(
        self,
        agent: HostAgent,
        context: ProcessingContext,
        parsed: HostAgentResponse,
        registry: TargetRegistry,
    ) -> HostOutcome:
        status = parsed.status
        none = Result(status=ResultStatus.NONE)
        result, target = none, None
        if parsed.function == SELECT_APPLICATION_COMMAND:
            target = registry.get(parsed.arguments.get("id"))
            if target is None:
                ids = [t.id for t in registry.all()]
                note = f"No target has id {parsed.arguments.get('id')!r}; the targets are {ids}."
                return HostOutcome(HostAgentStatus.CONTINUE.value, note, _failure(note))
            result = await agent.select_target(target, context.global_context)
            if not result.ok:
                return HostOutcome(
                    HostAgentStatus.CONTINUE.value, f"Selecting {target.name} failed.", result, target
                )
            # A successful selection hands the subtask over, whatever status the model wrote with it.
            if status in (HostAgentStatus.CONTINUE.value, HostAgentStatus.ASSIGN.value):
                status = HostAgentStatus.ASSIGN.value
        elif status == HostAgentStatus.ASSIGN.value and agent.selection is None:
            note = "ASSIGN needs a target: call select_application_window with a target id."
            return HostOutcome(HostAgentStatus.CONTINUE.value, note, none)
        verdict = await agent.guard_table.judge(host_step(agent, context, parsed, status), agent.guard_state)
        if verdict.decision is Decision.REFUSE:
            return HostOutcome(HostAgentStatus.CONTINUE.value, verdict.note, result, target)
        if verdict.decision in _VERDICT_STATUS:
            return HostOutcome(_VERDICT_STATUS[verdict.decision], verdict.note, result, target, settled=True)
        if parsed.function == SELECT_APPLICATION_COMMAND or not parsed.function:
            return HostOutcome(status, "", result, target)
        reason = sensitive_reason(parsed.function, parsed.arguments)
        if reason is None and status == HostAgentStatus.CONFIRM.value:
            reason = "the model asked for the user's confirmation"
        if reason and agent.safe_guard and not agent.auto_approve:
            agent.hold_for_confirmation(parsed, reason)
            note = f"Waiting for the user to approve {parsed.call_string()}: {reason}."
            return HostOutcome(HostAgentStatus.CONFIRM.value, note, none)
        result = await run_one(
            agent.dispatcher(context.global_context), parsed.function, parsed.arguments, "action"
        )
        if status == HostAgentStatus.CONFIRM.value:
            status = HostAgentStatus.CONTINUE.value
        return HostOutcome(status, "", result)


def host_step(
    agent: HostAgent, context: ProcessingContext, parsed: HostAgentResponse, status: str
) -> HostStep:
    """What the guards see of the step ``parsed`` proposes, with ``status`` as it would take effect."""
    request = str(context.get_global(ContextNames.REQUEST) or "")
    target, earlier = agent.target_history(context.global_context)
    return HostStep(
        request=request,
        status=status,
        function=parsed.function,
        subtask=parsed.current_subtask or request,
        target=target if status == HostAgentStatus.ASSIGN.value else "",
        earlier=earlier,
        records=list(context.get_global(ContextNames.PREVIOUS_SUBTASKS) or []),
        host_actions=[a for item in agent.memory.content for a in item.get_value("action") or []],
        answers=len(agent.blackboard.questions),
    )


def host_memory(agent: HostAgent, context: ProcessingContext, parsed: HostAgentResponse) -> MemoryItem:
    """The memory record of one HostAgent step."""
    local = context.local(HostProcessorContext)
    info = local.action_info
    output = noted_output(local.note, info.to_representation() if info and info.function else NO_ACTION_RUN)
    status = str(local.status or parsed.status)
    item = MemoryItem()
    item.add_values_from_dict(parsed.model_dump())
    item.add_values_from_dict(
        {
            # A result written with ASSIGN or CONTINUE is a guess (a small model writes the answer it
            # expects): kept out of the history and the Blackboard, where agents would take it as done.
            "result": parsed.result if status in _ROUND_END else "",
            "step": int(context.get_global(ContextNames.SESSION_STEP) or 0),
            "round_step": context.global_context.current_round_step,
            "round_num": int(context.get_global(ContextNames.CURRENT_ROUND_ID) or 0),
            "agent_step": agent.step,
            "agent_name": agent.name,
            "action": [info.model_dump(mode="json")] if info else [],
            "function_call": parsed.call_string(),
            "call": parsed.call_string(),
            "arguments": parsed.arguments,
            "status": status,
            "application": local.selected_application_root or local.assigned_third_party_agent or "",
            "output": output,
            "results": str(info.result.result) if info else "",
            "cost": local.llm_cost or 0.0,
            "tokens": local.tokens or 0,
            "time": time.time(),
        }
    )
    return item


@depends_on("session_step")
@provides("additional_memory", "memory_item", "memory_keys_count", "output")
class HostMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in memory, the structural logs, the Blackboard and the cost counters."""

    strategy_name = "host_memory_update"
    default_fail_fast = False

    async def execute(self, agent: HostAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem."""
        parsed = present(context.local(HostProcessorContext).parsed_response, "parsed_response")
        item = host_memory(agent, context, parsed)
        data = record_step(
            agent, context, item, trajectory=item.filter(agent.history_keys), structural_log=True
        )
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.MEMORY_UPDATE,
            data={
                "additional_memory": {k: data[k] for k in ("step", "agent_name", "application", "status")},
                "memory_item": item,
                "memory_keys_count": len(data),
                "output": data["output"],
            },
        )


__all__ = [
    "DesktopDataCollectionStrategy",
    "HostActionExecutionStrategy",
    "HostLLMInteractionStrategy",
    "HostMemoryUpdateStrategy",
    "TargetKind",
]
