"""The LinuxAgent's three phase strategies: ask the model, run its tool call, remember the step.

There is no DATA_COLLECTION phase: the agent gathers information by running commands
(spec C §4.3). An answer that repeats the previous step's call is drawn once more at a higher
temperature before any guard sees it. A FINISH or FAIL is settled by ``finish``: a FINISH that
carries a call runs it and ends the task only if it succeeds, and an ungrounded or premature
FINISH (or a FAIL right after a failure) is refused once with a note. Three more guards make the
small embedded model usable: a call identical to the one the previous step ran successfully is not
run again (the model is told its output is above; a second such repeat fails the task); a failing
call proposed a third time fails the task; and an answer with CONTINUE but no action gets
a reminder (twice in a row fails the task). A dangerous command (``dangerous_reason``) is not run
here: the status becomes CONFIRM and ConfirmLinuxAgentState asks the user, unless ``--yes``
approved it already.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field, replace
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
from starweave.agents.linux.content import expression_note, written_expression
from starweave.agents.linux.feedback import step_output
from starweave.agents.linux.finish import decide_fail, decide_finish
from starweave.agents.linux.local import LinuxProcessorContext
from starweave.agents.linux.orientation import AFTER_FAILURE_DEPTH, has_shell, look
from starweave.agents.linux.response import LinuxAgentResponse, LinuxAgentStatus, response_json_schema
from starweave.commands import Command, Result
from starweave.tools.servers.shell.danger import dangerous_reason

if TYPE_CHECKING:
    from starweave.agents.linux.agent import LinuxAgent
    from starweave.llm.base import Completion

MAX_REPEATS = 2
# A call that failed may be retried once as it is; the same failing call a third time ends the task,
# whenever it comes (the small model otherwise retries failing commands until the step cap, also
# taking turns between two of them).
MAX_FAILED_RETRIES = 1
MAX_IDLE_STEPS = 2
# Enough for the longest answer the response schema allows (its strings are capped).
ANSWER_TOKENS = 700
# The temperature of the second draw when the model repeats its previous call (see the LLM strategy).
RESAMPLE_TEMPERATURE = 0.7


def repeats_a_call(agent: LinuxAgent, response: LinuxAgentResponse) -> bool:
    """Whether ``response`` proposes to run again the call the previous step made, or a call that
    already failed for this request (a FINISH that names the call that just succeeded is an answer,
    not a repeat)."""
    if not response.action.function:
        return False
    signature = call_signature(response)
    if signature in agent.failed_calls:
        return True
    if signature != agent.last_call:
        return False
    return not (agent.last_call_ok and response.status == LinuxAgentStatus.FINISH.value)


def call_signature(response: LinuxAgentResponse) -> str:
    """A canonical key of the tool call, for spotting repeats."""
    return json.dumps([response.action.function, response.action.arguments], sort_keys=True)


@dataclass
class PendingAction:
    """A dangerous call waiting for the user's decision (status CONFIRM)."""

    command: Command
    command_text: str
    reason: str
    call: str
    signature: str
    status: str
    result: str


async def run_action(agent: LinuxAgent, dispatcher: Any, command: Command, signature: str) -> list[Result]:
    """Send one command through the dispatcher and remember it for the repeat guard."""
    results = list(await dispatcher.execute_commands([command], timeout=agent.command_timeout) or [])
    agent.last_call = signature
    agent.last_call_ok = bool(results) and all(r.ok for r in results)
    if not agent.last_call_ok:
        agent.failed_calls[signature] = agent.failed_calls.get(signature, 0) + 1
    return results


#: The output of a PENDING step (the pair itself is shown with the request, from the Blackboard).
QUESTION_NOTE = "Question for the user; the answer, if any, is with the request above."


@dataclass
class StepOutcome:
    """What the action phase decided: the step's status, a note for the model, the results, the
    user's answer (set with FINISH and FAIL)."""

    status: str
    note: str = ""
    results: list[Result] = field(default_factory=list)
    result: str = ""


def settle(
    agent: LinuxAgent,
    request: str,
    status: str,
    result: str,
    results: list[Result],
    *,
    ran_call: bool,
    command: str = "",
) -> StepOutcome:
    """The outcome of a step whose call (if any) has run: a FINISH or FAIL is checked (see ``finish``).
    ``command``: the shell command the step ran, if its call was one."""
    if status == LinuxAgentStatus.FINISH.value:
        decision = decide_finish(agent, request, result, results, ran_call, command=command)
    elif status == LinuxAgentStatus.FAIL.value:
        decision = decide_fail(agent, request, result)
    else:
        return StepOutcome(status, "", results)
    return StepOutcome(decision.status, decision.note, results, decision.result)


async def redraw(
    llm: Any, messages: list[dict[str, Any]], schema: dict[str, Any], max_tokens: int, first: Completion
) -> Completion:
    """A second answer to the same prompt at :data:`RESAMPLE_TEMPERATURE`, with both draws' usage,
    cost, time and attempts counted."""
    again: Completion = await llm.complete(
        messages, schema=schema, max_tokens=max_tokens, temperature=RESAMPLE_TEMPERATURE
    )
    return replace(
        again,
        usage=first.usage + again.usage,
        cost=first.cost + again.cost,
        latency=first.latency + again.latency,
        attempts=first.attempts + again.attempts,
    )


@depends_on("request")
@provides(
    "parsed_response",
    "response_text",
    "llm_cost",
    "prompt_message",
    "action",
    "thought",
    "observation",
    "tokens",
    "llm_time",
)
class LinuxLLMInteractionStrategy(BaseProcessingStrategy):
    """Build the prompt from the request and the history, get a schema-valid answer."""

    strategy_name = "linux_llm_interaction"

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Ask the model for the next step."""
        tools: list[dict[str, Any]] = context.get_global(ContextNames.TOOL_INFO) or []
        request = str(context.get("request") or context.get_global(ContextNames.REQUEST))
        agent.begin_request(request)
        if agent.oriented_for != request:
            # The first observation is the workspace itself: the model should not guess where files are.
            dispatcher = context.global_context.command_dispatcher
            logs = str(context.get_global(ContextNames.LOG_PATH) or "")
            skip = await asyncio.to_thread(os.path.realpath, logs) if logs else ""
            agent.orientation = await look(dispatcher, "you are in", skip=skip) if has_shell(tools) else ""
            agent.oriented_for = request
        await agent.context_provision(request)
        messages = agent.message_constructor(request=request, tools=tools)
        schema = response_json_schema(tools, ask=agent.offer_questions)
        log_request(context, {"prompt": messages, "schema": schema})
        completion = await agent.llm.complete(messages, schema=schema, max_tokens=ANSWER_TOKENS)
        parsed = LinuxAgentResponse.model_validate(completion.parsed)
        if repeats_a_call(agent, parsed):
            # At temperature 0 a small model answers a near-identical prompt with the same call,
            # and the guards would only refuse it; a second draw at a higher temperature often
            # finds another way. The prompt is cached, so this costs only the generation.
            completion = await redraw(agent.llm, messages, schema, ANSWER_TOKENS, completion)
            parsed = LinuxAgentResponse.model_validate(completion.parsed)
        return llm_result(
            parsed,
            completion,
            messages,
            {
                "action": parsed.action.model_dump(),
                "thought": parsed.thought,
                "observation": parsed.observation,
            },
        )


@depends_on("parsed_response")
@provides("results", "status", "note", "call", "result", "surroundings")
class LinuxActionExecutionStrategy(BaseProcessingStrategy):
    """Run the chosen tool through the command dispatcher, with the repeat and danger guards."""

    strategy_name = "linux_action_execution"
    default_fail_fast = False

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Execute the action and decide the step's status."""
        parsed = present(context.local(LinuxProcessorContext).parsed_response, "parsed_response")
        if parsed.status == LinuxAgentStatus.CONTINUE.value:
            agent.refused_last_step = False
        outcome = await self._run(agent, context, parsed)
        surroundings = ""
        tools: list[dict[str, Any]] = context.get_global(ContextNames.TOOL_INFO) or []
        failed = bool(outcome.results) and not all(r.ok for r in outcome.results)
        if failed and outcome.status == LinuxAgentStatus.CONTINUE.value and has_shell(tools):
            # After a failure the next observation shows what is there (a missing file, a wrong
            # folder): what a person at a terminal would look at before trying again.
            surroundings = await look(
                context.global_context.command_dispatcher,
                "where the next command starts",
                depth=AFTER_FAILURE_DEPTH,
            )
        result = outcome.result
        if outcome.note and outcome.status == LinuxAgentStatus.FAIL.value and not result:
            result = outcome.note
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.ACTION_EXECUTION,
            status=outcome.status,
            data={
                "results": outcome.results,
                "status": outcome.status,
                "note": outcome.note,
                "call": parsed.call_string(),
                "result": result,
                "surroundings": surroundings,
            },
        )

    async def _run(
        self, agent: LinuxAgent, context: ProcessingContext, parsed: LinuxAgentResponse
    ) -> StepOutcome:
        status = parsed.action.status
        request = str(context.get("request") or context.get_global(ContextNames.REQUEST) or "")
        if status == LinuxAgentStatus.PENDING.value:
            # A question for the user (in result): nothing runs; PendingLinuxAgentState asks it.
            question = parsed.result or parsed.comment or parsed.thought
            return StepOutcome(status, QUESTION_NOTE, [], question)
        if not parsed.action.function:
            if status != LinuxAgentStatus.CONTINUE.value:
                return settle(agent, request, status, parsed.result, [], ran_call=False)
            agent.idle_steps += 1
            if agent.idle_steps >= MAX_IDLE_STEPS:
                return StepOutcome(
                    LinuxAgentStatus.FAIL.value, "Stopped: the model gave no action twice in a row."
                )
            return StepOutcome(status, "No action was given: run a command, or reply FINISH with the answer.")
        agent.idle_steps = 0
        if status == LinuxAgentStatus.FAIL.value:
            # Giving up comes with no call to run, whatever the answer names.
            return settle(agent, request, status, parsed.result, [], ran_call=False)

        signature = call_signature(parsed)
        if signature == agent.last_call and agent.last_call_ok:
            if status == LinuxAgentStatus.FINISH.value:
                # "This call completes the request" about the call that just succeeded: its output
                # is what the answer rests on, so it is a FINISH without a call.
                return settle(agent, request, status, parsed.result, [], ran_call=False)
            # Only an immediate repeat of a successful call is refused: running `ls` again after
            # `mkdir` is legitimate, and a failed call may be retried.
            agent.repeats += 1
            if agent.repeats >= MAX_REPEATS:
                note = f"Stopped: the model kept repeating {parsed.call_string()}."
                return StepOutcome(LinuxAgentStatus.FAIL.value, note)
            note = (
                f"Not run again: the previous step ran exactly {parsed.call_string()}; its output is "
                "above. If it answers the request, reply FINISH with the answer in result; otherwise "
                "run something else."
            )
            return StepOutcome(LinuxAgentStatus.CONTINUE.value, note)
        agent.repeats = 0
        failures = agent.failed_calls.get(signature, 0)
        if failures > MAX_FAILED_RETRIES:
            note = (
                f"Stopped: {parsed.call_string()} failed {failures} times; the task needs another approach."
            )
            return StepOutcome(LinuxAgentStatus.FAIL.value, note)

        written = written_expression(parsed.action.function, parsed.action.arguments)
        if written is not None and signature not in agent.expressions_refused:
            agent.expressions_refused.add(signature)
            return StepOutcome(LinuxAgentStatus.CONTINUE.value, expression_note(*written))

        command = Command(
            tool_name=parsed.action.function, parameters=parsed.action.arguments, tool_type="action"
        )
        command_text = str(parsed.action.arguments.get("command", ""))
        reason = dangerous_reason(command_text) if parsed.action.function == "execute_command" else None
        if reason and not agent.auto_approve:
            agent.pending_action = PendingAction(
                command, command_text, reason, parsed.call_string(), signature, status, parsed.result
            )
            return StepOutcome(LinuxAgentStatus.CONFIRM.value, f"Waiting for the user to confirm: {reason}.")

        results = await run_action(agent, context.global_context.command_dispatcher, command, signature)
        return settle(agent, request, status, parsed.result, results, ran_call=True, command=command_text)


@depends_on("parsed_response")
@provides("memory_item", "output")
class LinuxMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in the agent's memory, the blackboard and the session's cost counters."""

    strategy_name = "linux_memory_update"
    default_fail_fast = False

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem for this step."""
        local = context.local(LinuxProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        results = local.results
        note = local.note or ""
        output = step_output(results, str(parsed.action.arguments.get("command") or ""), note)
        if local.surroundings:
            output = f"{output}\n{local.surroundings}"
        step = int(context.get_global(ContextNames.SESSION_STEP) or 0)
        item = MemoryItem()
        item.add_values_from_dict(
            {
                "step": step,
                "request": str(context.get("request") or context.get_global(ContextNames.REQUEST) or ""),
                "observation": parsed.observation,
                "thought": parsed.thought,
                "action": parsed.action.model_dump(),
                "call": parsed.call_string(),
                "status": local.status or parsed.status,
                "result": local.result or "",
                "output": output,
                "failed": bool(results) and not all(r.ok for r in results),
                "response": parsed.model_dump(include={"observation", "thought", "action", "result"}),
                # The model's own text comes back in the next prompts (see prompter.answer_text).
                "answer_text": local.response_text or "",
                "results": [r.model_dump(mode="json") for r in results],
                "cost": local.llm_cost or 0.0,
                "tokens": local.tokens or 0,
                "time": time.time(),
            }
        )
        # Item order, not history_keys order: the host's prompt shows this trajectory as it is.
        trajectory = {k: v for k, v in item.to_dict().items() if k in agent.history_keys}
        record_step(agent, context, item, trajectory=trajectory)
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.MEMORY_UPDATE,
            data={"memory_item": item, "output": output},
        )
