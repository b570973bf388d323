"""The MobileAgent's LLM, action and memory strategies (spec C §4.4).

The model answers ``{"thought", "action": {"function", "arguments", "status"}, "comment"}``. The
action phase runs the call through the command dispatcher: a control action (``click_control``,
``type_text``) must name a control of this step's list (its ``control_name`` is filled in from the
list when the model left it out); an action whose control or text says send, delete, pay, install
or uninstall waits for the user (status CONFIRM, see ``safety``); a failed action turns a FINISH
into CONTINUE, so the model sees the failure (that is the response format's meaning, not a guard).
The agent's guard table (``guards.py``) is asked once per step, about the proposed action before it
runs; the step then closes (``GuardState.end_step``). The small model at temperature 0 answers the
same screen with the same call: with the guards on, an action the ``repeat`` guard would refuse is
drawn once more at a higher temperature first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
from starweave.agents.app.controls import Control
from starweave.agents.app.dispatch import run_one
from starweave.agents.common import NO_ACTION_RUN, noted_output
from starweave.agents.linux.strategies import redraw
from starweave.agents.mobile import tools
from starweave.agents.mobile.guards import MobileStep
from starweave.agents.mobile.local import MobileProcessorContext
from starweave.agents.mobile.response import MobileAgentResponse, MobileAgentStatus, response_json_schema
from starweave.agents.mobile.safety import mobile_risk
from starweave.commands import Command, Result

if TYPE_CHECKING:
    from starweave.agents.mobile.agent import MobileAgent

#: Enough for the longest answer the schema allows.
ANSWER_TOKENS = 400
#: MobileExecutor's tool naming the package launch_app would start (never offered to the model).
RESOLVE_APP = "resolve_app"
CONTINUE = MobileAgentStatus.CONTINUE.value
FINISH = MobileAgentStatus.FINISH.value
FAIL = MobileAgentStatus.FAIL.value
ENDS = (FINISH, FAIL)


@dataclass
class PendingMobileAction:
    """A sensitive action waiting for the user's decision (status CONFIRM)."""

    command: Command
    call: str
    reason: str
    status: str
    comment: str
    #: The control the risk is about, re-checked on a fresh control list before the action runs.
    target: dict[str, Any] | None = None


@dataclass
class MobileOutcome:
    """What the action phase settled: the status, a note for the model, the results, the answer."""

    status: str
    note: str = ""
    results: list[Result] = field(default_factory=list)
    result: str = ""


async def run_mobile_action(agent: MobileAgent, dispatcher: Any, held: PendingMobileAction) -> MobileOutcome:
    """Run one action; success keeps the model's status (and is remembered for the prompt's "[Last
    Success Actions]"), failure continues with the error as the note."""
    results = list(await dispatcher.execute_commands([held.command]) or [])
    failure = next((f for f in map(tools.action_failure, results) if f), "" if results else "no result")
    if failure:
        status = FAIL if held.status == FAIL else CONTINUE
        return MobileOutcome(status, f"The action {held.call} failed: {failure}", results)
    agent.success_actions.append(held.call)
    return MobileOutcome(held.status, "", results, held.comment if held.status in ENDS else "")


def mobile_step(agent: MobileAgent, request: str, parsed: MobileAgentResponse) -> MobileStep:
    """What the guards see of the step ``parsed`` proposes."""
    return MobileStep(
        request, parsed.status, parsed.action.function, parsed.call_string(), list(agent.success_actions)
    )


def control_arguments(
    function: str, arguments: dict[str, Any], controls: dict[str, Control]
) -> tuple[dict[str, Any], str]:
    """The arguments of a control action with ``control_name`` filled in from this step's list, and
    why the action cannot run ("" when it can)."""
    if function not in tools.CONTROL_ACTIONS:
        return arguments, ""
    ident = str(arguments.get("control_id") or "")
    control = controls.get(ident)
    if control is None:
        return arguments, f"No control has id {ident!r} on this screen; use an id from the list."
    return {**arguments, "control_id": ident, "control_name": control.name}, ""


async def launch_arguments(dispatcher: Any, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``launch_app``'s arguments naming the package the server resolves (an app name or a listed
    id), so the CONFIRM check and the launch are about the same package; and why it cannot run."""
    result = await run_one(dispatcher, RESOLVE_APP, dict(arguments), "action")
    value = result.result if result.ok else None
    if isinstance(value, dict) and value.get("success") and value.get("package_name"):
        return {"package_name": str(value["package_name"])}, ""
    if isinstance(value, dict) and value.get("error"):
        return arguments, f"launch_app({arguments}) cannot run: {value['error']}"
    # A server without resolve_app: the check falls back on the name the model gave.
    return arguments, ""


@depends_on("installed_apps", "current_controls", "clean_screenshot_url")
@provides(
    "parsed_response",
    "response_text",
    "llm_cost",
    "prompt_message",
    "action",
    "thought",
    "comment",
    "tokens",
    "llm_time",
)
class MobileLLMInteractionStrategy(BaseProcessingStrategy):
    """Build the prompt from the screen and the history, get a schema-valid answer."""

    strategy_name = "mobile_llm_interaction"

    async def execute(self, agent: MobileAgent, context: ProcessingContext) -> ProcessingResult:
        """Ask the model for the next action."""
        local = context.local(MobileProcessorContext)
        request = str(context.get("request") or context.get_global(ContextNames.REQUEST) or "")
        agent.guard_state.begin(request)
        action_tools = await agent.action_tools(context.global_context)
        messages = agent.message_constructor(request, action_tools, local)
        schema = response_json_schema(action_tools)
        log_request(context, {"prompt": messages, "schema": schema})
        completion = await agent.llm.complete(messages, schema=schema, max_tokens=ANSWER_TOKENS)
        parsed = MobileAgentResponse.model_validate(completion.parsed)
        if agent.guard_table.enabled and mobile_step(agent, request, parsed).repeats_success:
            completion = await redraw(agent.llm, messages, schema, ANSWER_TOKENS, completion)
            parsed = MobileAgentResponse.model_validate(completion.parsed)
        fields = {"action": parsed.action.model_dump(), "thought": parsed.thought, "comment": parsed.comment}
        return llm_result(parsed, completion, messages, fields)


@depends_on("parsed_response")
@provides("execution_result", "status", "note", "call", "result")
class MobileActionExecutionStrategy(BaseProcessingStrategy):
    """Run the chosen action through the command dispatcher, or hold it for CONFIRM."""

    strategy_name = "mobile_action_execution"
    default_fail_fast = False

    async def execute(self, agent: MobileAgent, context: ProcessingContext) -> ProcessingResult:
        """Execute the action and settle the step's status."""
        local = context.local(MobileProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        outcome = await self._run(agent, context, local, parsed)
        agent.guard_state.end_step()
        data = {
            "execution_result": outcome.results,
            "status": outcome.status,
            "note": outcome.note,
            "call": parsed.call_string(),
            "result": outcome.result or (outcome.note if outcome.status == FAIL else ""),
        }
        return ProcessingResult(
            success=True, phase=ProcessingPhase.ACTION_EXECUTION, status=outcome.status, data=data
        )

    @staticmethod
    async def _run(
        agent: MobileAgent,
        context: ProcessingContext,
        local: MobileProcessorContext,
        parsed: MobileAgentResponse,
    ) -> MobileOutcome:
        status, function = parsed.status, parsed.action.function
        if status == FAIL or (not function and status in ENDS):
            # FINISH without a call, or giving up (whatever the answer names): nothing runs.
            return MobileOutcome(status, "", [], parsed.comment or parsed.thought)
        request = str(context.get("request") or context.get_global(ContextNames.REQUEST) or "")
        verdict = await agent.guard_table.judge(mobile_step(agent, request, parsed), agent.guard_state)
        if verdict.decision is Decision.STOP:
            return MobileOutcome(FAIL, verdict.note)
        if verdict.decision is Decision.REFUSE:
            return MobileOutcome(CONTINUE, verdict.note)
        if not function:
            return MobileOutcome(CONTINUE)  # nothing to run (the guards are off, or let it pass)
        arguments, problem = control_arguments(function, parsed.action.arguments, local.annotation_dict)
        if problem:
            return MobileOutcome(CONTINUE, problem)
        dispatcher = context.global_context.command_dispatcher
        if function == "launch_app":
            arguments, problem = await launch_arguments(dispatcher, arguments)
            if problem:
                return MobileOutcome(CONTINUE, problem)
        command = Command(tool_name=function, parameters=arguments, tool_type="action")
        held = PendingMobileAction(command, parsed.call_string(), "", status, parsed.comment)
        risk = mobile_risk(function, arguments, local.current_controls or [])
        if risk and not agent.auto_approve:
            held.reason, held.target = risk.reason, risk.target
            agent.pending = held
            return MobileOutcome(
                MobileAgentStatus.CONFIRM.value, f"Waiting for the user to confirm: {risk.reason}."
            )
        return await run_mobile_action(agent, dispatcher, held)


def step_text(messages: list[dict[str, Any]] | None) -> str:
    """The text of a step's own user message (its images left out)."""
    content = (messages or [{}])[-1].get("content") or ""
    if isinstance(content, list):
        return "\n".join(str(part.get("text") or "") for part in content if part.get("type") == "text")
    return str(content)


def step_output(results: list[Result], note: str) -> str:
    """What the step did, for the console and the next prompt."""
    outputs = [tools.action_output(r) or (r.error or "") for r in results]
    return noted_output(note, "\n".join(o for o in outputs if o) or NO_ACTION_RUN)


@depends_on("parsed_response")
@provides("memory_item", "output")
class MobileMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in the agent's memory, the Blackboard and the session's cost counters."""

    strategy_name = "mobile_memory_update"
    default_fail_fast = False

    async def execute(self, agent: MobileAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem for this step."""
        local = context.local(MobileProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        results = local.execution_result
        output = step_output(results, local.note or "")
        item = MemoryItem()
        item.add_values_from_dict(
            {
                "step": int(context.get_global(ContextNames.SESSION_STEP) or 0),
                "request": str(context.get("request") or ""),
                "thought": parsed.thought,
                "action": parsed.action.model_dump(),
                "call": parsed.call_string(),
                "status": local.status or parsed.status,
                "comment": parsed.comment,
                "result": local.result or "",
                "note": local.note or "",
                "output": output,
                "prompt_text": step_text(local.prompt_message),
                "answer_text": local.response_text or "",
                "results": [r.model_dump(mode="json") for r in results],
                "cost": local.llm_cost or 0.0,
                "tokens": local.tokens or 0,
                "time": time.time(),
            }
        )
        keys = ("step", "thought", "call", "status", "result")
        record_step(agent, context, item, trajectory={k: item.get_value(k) for k in keys})
        return ProcessingResult(
            success=True, phase=ProcessingPhase.MEMORY_UPDATE, data={"memory_item": item, "output": output}
        )
