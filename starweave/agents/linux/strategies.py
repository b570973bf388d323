"""The LinuxAgent's three phase strategies: ask the model, run its tool call, remember the step.

There is no DATA_COLLECTION phase: the agent gathers information by running commands
(spec C §4.3). An answer that repeats the previous step's call (or a call that failed) is drawn once
more at a higher temperature before the guards see it. The action phase runs the agent's guard
table (``guards``) on the proposed step, runs its call, and for a FINISH or FAIL runs the table
again on the outcome. A FINISH that carries a call means "this call completes the request": if the
call fails, the step goes on (that is the response format's meaning, not a guard). A dangerous
command (``dangerous_reason``) is not run here: the status becomes CONFIRM and
ConfirmLinuxAgentState asks the user, unless ``--yes`` approved it already.
"""

from __future__ import annotations

import asyncio
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
from starweave.agent.guards import Decision
from starweave.agents.linux.feedback import clip, results_failed, step_output
from starweave.agents.linux.guards import (
    LAST_CALL,
    LAST_OK,
    SKIP,
    WORLD,
    LinuxStep,
    call_signature,
    failed_with_error,
    quotes_any,
    remember_call,
    repeats_a_call,
    results_of,
)
from starweave.agents.linux.local import LinuxProcessorContext
from starweave.agents.linux.orientation import (
    AFTER_FAILURE_DEPTH,
    TREE_DEPTH,
    folder_view,
    has_shell,
    list_folder,
    look,
)
from starweave.agents.linux.response import LinuxAgentResponse, LinuxAgentStatus, response_json_schema
from starweave.agents.linux.world import WORLD_DEPTH
from starweave.commands import Command, Result
from starweave.tools.servers.shell.danger import dangerous_reason

if TYPE_CHECKING:
    from starweave.agents.linux.agent import LinuxAgent
    from starweave.llm.base import Completion

# Enough for the longest answer the response schema allows (its strings are capped).
ANSWER_TOKENS = 700
# The temperature of the second draw when the model repeats its previous call (see the LLM strategy).
RESAMPLE_TEMPERATURE = 0.7


@dataclass
class PendingAction:
    """A dangerous call waiting for the user's decision (status CONFIRM), and the step it is part of."""

    command: Command
    command_text: str
    reason: str
    step: LinuxStep


#: Characters of a finishing call's output added to the result.
FINISH_OUTPUT_CHARS = 400
FAILED_FINISH_NOTE = "Not finished: the command failed."


async def run_action(agent: LinuxAgent, dispatcher: Any, command: Command, signature: str) -> list[Result]:
    """Send one command through the dispatcher and remember it for the guards."""
    results = list(await dispatcher.execute_commands([command], timeout=agent.command_timeout) or [])
    remember_call(agent.guard_state, signature, results)
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


def _stdout(results: list[Result]) -> str:
    texts = [str(r.result.get("stdout") or "").strip() for r in results if isinstance(r.result, dict)]
    return "\n".join(t for t in texts if t)


def _evidence_of(step: LinuxStep, results: list[Result], ran_call: bool) -> list[Result]:
    """The results a FINISH rests on: its own call's, or without one the previous step's (when
    that step, of the same request, ran a call that succeeded)."""
    if ran_call:
        return results
    previous = step.memory[-1] if step.memory else None
    if previous is None or previous.get_value("request") != step.request:
        return []
    earlier = results_of(previous.get_value("results"))
    return [] if results_failed(earlier) else earlier


async def settle(agent: LinuxAgent, step: LinuxStep, results: list[Result], *, ran_call: bool) -> StepOutcome:
    """The outcome of a step whose call (if any) has run: a FINISH or FAIL is judged by the guards.

    The output a FINISH rests on (its call's, or the previous step's), when the result does not
    already quote it, is added to the result: the user sees the real output, not only the model's
    summary of it."""
    status = step.status
    if status not in (LinuxAgentStatus.FINISH.value, LinuxAgentStatus.FAIL.value):
        return StepOutcome(status, "", results)
    if ran_call and status == LinuxAgentStatus.FINISH.value and results_failed(results):
        return StepOutcome(LinuxAgentStatus.CONTINUE.value, FAILED_FINISH_NOTE, results)
    step.results, step.ran_call = results, ran_call
    verdict = await agent.guard_table.judge(step, agent.guard_state)
    if verdict.decision is Decision.STOP:
        return StepOutcome(LinuxAgentStatus.FAIL.value, verdict.note, results)
    if verdict.decision is Decision.REFUSE:
        return StepOutcome(LinuxAgentStatus.CONTINUE.value, verdict.note, results)
    result = step.result
    printed = (
        _stdout(_evidence_of(step, results, ran_call)) if status == LinuxAgentStatus.FINISH.value else ""
    )
    # A result that quotes nothing of the earlier output it rests on ("the files are found") gets it.
    if printed and printed not in result and (ran_call or not quotes_any(result, printed)):
        result = f"{result}\nOutput:\n{clip(printed, FINISH_OUTPUT_CHARS)}".strip()
    return StepOutcome(status, "", results, result)


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
        state = agent.guard_state
        state.begin(request)
        if agent.oriented_for != request:
            # The first observation is the workspace itself: the model should not guess where files
            # are. The same listing, deeper, is what a FINISH is checked against (guards.Checked).
            dispatcher = context.global_context.command_dispatcher
            logs = str(context.get_global(ContextNames.LOG_PATH) or "")
            skip = await asyncio.to_thread(os.path.realpath, logs) if logs else ""
            listing = await list_folder(dispatcher, WORLD_DEPTH, skip) if has_shell(tools) else None
            agent.orientation = folder_view(listing, "you are in", TREE_DEPTH) if listing else ""
            state.facts[WORLD] = listing
            state.facts[SKIP] = skip
            agent.oriented_for = request
        await agent.context_provision(request)
        messages = agent.message_constructor(request=request, tools=tools)
        schema = response_json_schema(tools, ask=agent.offer_questions)
        log_request(context, {"prompt": messages, "schema": schema})
        completion = await agent.llm.complete(messages, schema=schema, max_tokens=ANSWER_TOKENS)
        parsed = LinuxAgentResponse.model_validate(completion.parsed)
        signature = call_signature(parsed.action.function, parsed.action.arguments)
        if (
            agent.guard_table.enabled
            and parsed.action.function
            and repeats_a_call(state, signature, parsed.status)
        ):
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
    """Judge the proposed step by the guards, run its call through the command dispatcher (a
    dangerous one only once the user confirmed it) and settle a FINISH or FAIL."""

    strategy_name = "linux_action_execution"
    default_fail_fast = False

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Execute the action and decide the step's status."""
        parsed = present(context.local(LinuxProcessorContext).parsed_response, "parsed_response")
        outcome = await self._run(agent, context, parsed)
        agent.guard_state.end_step()
        surroundings = ""
        tools: list[dict[str, Any]] = context.get_global(ContextNames.TOOL_INFO) or []
        if (
            failed_with_error(outcome.results)
            and outcome.status == LinuxAgentStatus.CONTINUE.value
            and has_shell(tools)
        ):
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
        if status == LinuxAgentStatus.PENDING.value:
            # A question for the user (in result): nothing runs; PendingLinuxAgentState asks it.
            question = parsed.result or parsed.comment or parsed.thought
            return StepOutcome(status, QUESTION_NOTE, [], question)
        step = linux_step(agent, context, parsed)
        state = agent.guard_state
        finishing = status in (LinuxAgentStatus.FINISH.value, LinuxAgentStatus.FAIL.value)
        if finishing and (
            not step.function
            or status == LinuxAgentStatus.FAIL.value
            or (step.signature == state.facts.get(LAST_CALL) and state.facts.get(LAST_OK))
        ):
            # Giving up comes with no call to run, whatever the answer names; and "this call
            # completes the request" about the call that just succeeded rests on its output.
            return await settle(agent, step, [], ran_call=False)
        verdict = await agent.guard_table.judge(step, state)
        if verdict.decision is Decision.STOP:
            return StepOutcome(LinuxAgentStatus.FAIL.value, verdict.note)
        if verdict.decision is Decision.REFUSE:
            return StepOutcome(LinuxAgentStatus.CONTINUE.value, verdict.note)
        if not step.function:
            return StepOutcome(status)
        command = Command(tool_name=step.function, parameters=step.arguments, tool_type="action")
        command_text = str(step.arguments.get("command", ""))
        reason = dangerous_reason(command_text) if step.function == "execute_command" else None
        if reason and not agent.auto_approve:
            agent.pending_action = PendingAction(command, command_text, reason, step)
            return StepOutcome(LinuxAgentStatus.CONFIRM.value, f"Waiting for the user to confirm: {reason}.")
        results = await run_action(agent, context.global_context.command_dispatcher, command, step.signature)
        return await settle(agent, step, results, ran_call=True)


def linux_step(agent: LinuxAgent, context: ProcessingContext, parsed: LinuxAgentResponse) -> LinuxStep:
    """What the guards see of the step ``parsed`` proposes."""
    request = str(context.get("request") or context.get_global(ContextNames.REQUEST) or "")
    return LinuxStep(
        request=request,
        status=parsed.action.status,
        function=parsed.action.function,
        arguments=parsed.action.arguments,
        call=parsed.call_string(),
        result=parsed.result,
        memory=list(agent.memory.content),
        dispatcher=context.global_context.command_dispatcher,
        skip=str(agent.guard_state.facts.get(SKIP) or ""),
    )


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
        output = step_output(results, note)
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
                # A quiet non-zero exit (grep finding nothing, a loop's last test) is an answer: only
                # a call that failed with an error gets the "that failed" cue.
                "failed": bool(failed_with_error(results)),
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
