"""The LinuxAgent's three phase strategies: ask the model, run its tool call, remember the step.

There is no DATA_COLLECTION phase: the agent gathers information by running commands
(spec C §4.3). Three guards make the small embedded model usable: a call identical to the one the
previous step ran successfully is not run again (the model is told its output is above; a second
such repeat fails the task); a failing call repeated as it is a third time fails the task; and an
answer with CONTINUE but no action gets a reminder (twice in a row fails the task). A dangerous
command (``dangerous_reason``) is not run here: the status becomes CONFIRM and
ConfirmLinuxAgentState asks the user, unless ``--yes`` approved it already.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
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
    provides,
    record_step,
)
from starweave.agents.linux.feedback import NOTHING_RUN, describe_results
from starweave.agents.linux.response import LinuxAgentResponse, LinuxAgentStatus, response_json_schema
from starweave.commands import Command, Result
from starweave.tools.servers.shell.danger import dangerous_reason

if TYPE_CHECKING:
    from starweave.agents.linux.agent import LinuxAgent

MAX_REPEATS = 2
# A call that failed may be retried once as it is; the same failing call a third time ends the task
# (the small model otherwise retries a refused command until the step cap).
MAX_FAILED_RETRIES = 1
MAX_IDLE_STEPS = 2
# Enough for the longest answer the response schema allows (its strings are capped).
ANSWER_TOKENS = 700


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
    return results


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

    def __init__(self, fail_fast: bool = True) -> None:
        super().__init__(name="linux_llm_interaction", fail_fast=fail_fast)

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Ask the model for the next step."""
        try:
            tools: list[dict[str, Any]] = context.get_global(ContextNames.TOOL_INFO) or []
            request = str(context.get("request") or context.get_global(ContextNames.REQUEST))
            messages = agent.message_constructor(request=request, tools=tools)
            schema = response_json_schema(tools)
            log_request(context, {"prompt": messages, "schema": schema})
            completion = await agent.llm.complete(messages, schema=schema, max_tokens=ANSWER_TOKENS)
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
        except Exception as exc:  # handle_error re-raises when fail_fast, which is the point
            return self.handle_error(exc, ProcessingPhase.LLM_INTERACTION, context)


@depends_on("parsed_response")
@provides("results", "status", "note", "call", "result")
class LinuxActionExecutionStrategy(BaseProcessingStrategy):
    """Run the chosen tool through the command dispatcher, with the repeat and danger guards."""

    def __init__(self, fail_fast: bool = False) -> None:
        super().__init__(name="linux_action_execution", fail_fast=fail_fast)

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Execute the action and decide the step's status."""
        try:
            parsed: LinuxAgentResponse = context.get_local("parsed_response")
            status, note, results = await self._run(agent, context, parsed)
            agent.status = status
            result = (
                parsed.result
                if status in (LinuxAgentStatus.FINISH.value, LinuxAgentStatus.FAIL.value)
                else ""
            )
            if note and status == LinuxAgentStatus.FAIL.value and not result:
                result = note
            return ProcessingResult(
                success=True,
                phase=ProcessingPhase.ACTION_EXECUTION,
                data={
                    "results": results,
                    "status": status,
                    "note": note,
                    "call": parsed.call_string(),
                    "result": result,
                },
            )
        except Exception as exc:
            agent.status = LinuxAgentStatus.FAIL.value
            return self.handle_error(exc, ProcessingPhase.ACTION_EXECUTION, context)

    async def _run(
        self, agent: LinuxAgent, context: ProcessingContext, parsed: LinuxAgentResponse
    ) -> tuple[str, str, list[Result]]:
        status = parsed.action.status
        if not parsed.action.function:
            if status != LinuxAgentStatus.CONTINUE.value:
                return status, "", []
            agent.idle_steps += 1
            if agent.idle_steps >= MAX_IDLE_STEPS:
                return LinuxAgentStatus.FAIL.value, "Stopped: the model gave no action twice in a row.", []
            return status, "No action was given: run a command, or reply FINISH with the answer.", []
        agent.idle_steps = 0

        signature = call_signature(parsed)
        if signature == agent.last_call and agent.last_call_ok:
            # Only an immediate repeat of a successful call is refused: running `ls` again after
            # `mkdir` is legitimate, and a failed call may be retried.
            agent.repeats += 1
            if agent.repeats >= MAX_REPEATS:
                note = f"Stopped: the model kept repeating {parsed.call_string()}."
                return LinuxAgentStatus.FAIL.value, note, []
            note = (
                f"Not run again: the previous step ran exactly {parsed.call_string()}; its output is "
                "above. If it answers the request, reply FINISH with the answer in result; otherwise "
                "run something else."
            )
            return LinuxAgentStatus.CONTINUE.value, note, []
        agent.repeats = 0
        if signature == agent.last_call and not agent.last_call_ok:
            agent.failed_retries += 1
            if agent.failed_retries > MAX_FAILED_RETRIES:
                note = (
                    f"Stopped: {parsed.call_string()} failed {agent.failed_retries} times in a row; "
                    "the task needs another approach."
                )
                return LinuxAgentStatus.FAIL.value, note, []
        else:
            agent.failed_retries = 0

        command = Command(
            tool_name=parsed.action.function, parameters=parsed.action.arguments, tool_type="action"
        )
        command_text = str(parsed.action.arguments.get("command", ""))
        reason = dangerous_reason(command_text) if parsed.action.function == "execute_command" else None
        if reason and not agent.auto_approve:
            agent.pending_action = PendingAction(
                command, command_text, reason, parsed.call_string(), signature, status, parsed.result
            )
            return LinuxAgentStatus.CONFIRM.value, f"Waiting for the user to confirm: {reason}.", []

        results = await run_action(agent, context.global_context.command_dispatcher, command, signature)
        return status, "", results


@depends_on("parsed_response")
@provides("memory_item", "output")
class LinuxMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in the agent's memory, the blackboard and the session's cost counters."""

    def __init__(self, fail_fast: bool = False) -> None:
        super().__init__(name="linux_memory_update", fail_fast=fail_fast)

    async def execute(self, agent: LinuxAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem for this step."""
        try:
            parsed: LinuxAgentResponse = context.get_local("parsed_response")
            results: list[Result] = context.get_local("results") or []
            note = str(context.get_local("note") or "")
            output = describe_results(results) if results else note or NOTHING_RUN
            if results and note:
                output = f"{note}\n{output}"
            step = int(context.get_global(ContextNames.SESSION_STEP) or 0)
            item = MemoryItem()
            item.add_values_from_dict(
                {
                    "step": step,
                    "observation": parsed.observation,
                    "thought": parsed.thought,
                    "action": parsed.action.model_dump(),
                    "call": parsed.call_string(),
                    "status": context.get_local("status") or parsed.status,
                    "result": context.get_local("result") or "",
                    "output": output,
                    "response": parsed.model_dump(include={"observation", "thought", "action", "result"}),
                    "results": [r.model_dump(mode="json") for r in results],
                    "cost": context.get_local("llm_cost") or 0.0,
                    "tokens": context.get_local("tokens") or 0,
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
        except Exception as exc:
            return self.handle_error(exc, ProcessingPhase.MEMORY_UPDATE, context)
