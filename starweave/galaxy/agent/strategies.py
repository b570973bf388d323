"""The ConstellationAgent's phase strategies (spec B §5.3, E §6.4).

LLM interaction (fail-fast) → action execution by weaving mode (creation: one ``build_constellation``
call; editing: the answer's tool calls) → memory update. The MCP server edits the agent's
ConstellationEditor in place, so nothing is read back from its answers: after a successful build the
editor's constellation is the plan, and every edit has already changed it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError

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
from starweave.commands import Command, Result, ResultStatus
from starweave.errors import AgentError, InvalidArgumentError
from starweave.galaxy.agent.local import ConstellationProcessorContext
from starweave.galaxy.agent.plan import PlanProblem, complete_plan, describe_problems, plan_faults
from starweave.galaxy.agent.plan_guards import PlanStep, guard_problems
from starweave.galaxy.agent.prompter import llm_tools, online_devices
from starweave.galaxy.agent.response import (
    ActionCommandInfo,
    ConstellationAgentResponse,
    WeavingMode,
    creation_json_schema,
    editing_json_schema,
)
from starweave.galaxy.agent.review import repair_edits
from starweave.galaxy.constellation import TaskConstellation

if TYPE_CHECKING:
    from starweave.galaxy.agent.agent import ConstellationAgent

# Enough for the largest plan the schema allows; a typical answer is 100-200 tokens.
ANSWER_TOKENS = 1200
BUILD_TOOL = "build_constellation"


def weaving_mode_of(context: ProcessingContext) -> WeavingMode:
    """The mode in the global context (ValueError when it is missing or unknown)."""
    raw = context.get_global(ContextNames.WEAVING_MODE)
    if not raw:
        raise InvalidArgumentError("Weaving mode must be specified in global context")
    return WeavingMode(str(getattr(raw, "value", raw)).upper())


def describe_failure(action: ActionCommandInfo, result: Result) -> str:
    """One line naming a refused call and the editor's reason."""
    reason = result.error or str(result.result or "") or result.status.value
    reason = re.sub(r"^Error executing tool \w+: ", "", reason)  # the MCP wrapper says nothing new
    return f"{action.to_representation()} was refused: {reason}"


@provides(
    "parsed_response",
    "response_text",
    "plan_warnings",
    "llm_cost",
    "prompt_message",
    "status",
    "thought",
    "tokens",
    "prompt_tokens",
    "completion_tokens",
    "llm_time",
)
class ConstellationLLMInteractionStrategy(BaseProcessingStrategy):
    """Build the mode's prompt, get an answer valid against the mode's schema and the response model.

    The LLM layer retries unparsable JSON itself (``json_retries`` of the client) and raises
    LLMResponseError when it gives up; this strategy additionally retries, up to the agent's
    ``json_retries``, answers that are valid JSON but not a valid ConstellationAgentResponse.
    """

    strategy_name = "constellation_llm_interaction"

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Ask the model."""
        return await self._ask(agent, context)

    async def _ask(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        mode = weaving_mode_of(context)
        devices: list[dict[str, Any]] = context.get_global(ContextNames.DEVICE_INFO) or []
        constellation = context.get_global(ContextNames.CONSTELLATION)
        request = str(context.get_global(ContextNames.REQUEST) or "")
        messages = agent.message_constructor(request, devices, constellation)
        device_ids = [str(d.get("device_id")) for d in online_devices(devices)]
        if mode is WeavingMode.CREATION:
            schema = creation_json_schema(device_ids)
        else:
            schema = editing_json_schema(llm_tools(agent.editing_tools), final=agent.final_round)
        log_request(
            context,
            {
                "weaving_mode": mode.value,
                "device_info": devices,
                "constellation": constellation.to_dict() if constellation is not None else None,
                "request": request,
                "prompt": messages,
            },
        )
        conversation = list(messages)
        attempts = max(1, agent.json_retries)
        last_error = ""
        if mode is WeavingMode.CREATION:
            agent.plan_guard_state.begin(request)
        for attempt in range(1, attempts + 1):
            completion = await agent.llm.complete(conversation, schema=schema, max_tokens=ANSWER_TOKENS)
            try:
                parsed = ConstellationAgentResponse.model_validate(completion.parsed or {})
            except ValidationError as exc:
                last_error = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or '$'}: {err['msg']}" for err in exc.errors()
                )
                plan = False
            else:
                plan = True
                last_error, warnings = await self._judge_plan(agent, parsed, mode, devices, request)
                if not last_error or (not warnings[0].fatal and attempt == attempts):
                    if last_error:  # heuristic checks only: the plan may still work, so it runs
                        self.logger.warning("Running the plan despite: %s", last_error)
                    return await self._answer(agent, parsed, completion, messages, warnings)
            self.logger.info("ConstellationAgent answer rejected: %s", last_error)
            conversation = self._retry_conversation(conversation, messages, completion.text, last_error, plan)
        what = "plan could not be used" if mode is WeavingMode.CREATION else "answer was not valid"
        raise AgentError(
            f"The model's {what} after {attempts} attempts; last error: {last_error}. "
            "Use a stronger model or raise json_retries."
        )

    @staticmethod
    async def _judge_plan(
        agent: ConstellationAgent,
        parsed: ConstellationAgentResponse,
        mode: WeavingMode,
        devices: Sequence[Mapping[str, Any]],
        request: str,
    ) -> tuple[str, list[PlanProblem]]:
        """A creation plan made whole (names, line ids) in ``parsed`` and judged: its faults on the
        online ``devices`` (fatal), else the plan guards' verdict. Returns the reason it cannot be
        used now ("" when it can) and the problems to report (a refusal's, or, once the model
        insisted, those the guards still find)."""
        if mode is not WeavingMode.CREATION or parsed.constellation is None:
            return "", []
        parsed.constellation = complete_plan(parsed.constellation)
        if parsed.status != "CONTINUE":
            return "", []
        online = online_devices(devices)
        device_ids = [str(d.get("device_id")) for d in online]
        faults = plan_faults(parsed.constellation, device_ids or None, online)
        if faults:
            return describe_problems(faults), faults
        example = agent.prompter.examples_prompt_helper() if agent.prompter is not None else ""
        step = PlanStep(parsed.constellation, device_ids, request, example)
        state = agent.plan_guard_state
        verdict = await agent.plan_guards.judge(step, state)
        state.end_step()  # each attempt is a step: the model may insist on a refused plan once
        if not verdict.allowed:
            return verdict.note, [PlanProblem(verdict.note)]
        return "", guard_problems(step) if agent.plan_guards.enabled else []

    @staticmethod
    def _retry_conversation(
        conversation: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        answer: str,
        reason: str,
        plan: bool,
    ) -> list[dict[str, Any]]:
        """The next attempt's messages. An invalid answer goes back as a chat turn with the reason;
        a valid ``plan`` that cannot work does not (a small model shown its own plan copies it):
        the first prompt is asked again with the reason as a note at its end (the system prompt
        stays the cached prefix)."""
        last = messages[-1]
        if not plan or not isinstance(last.get("content"), str):
            return [
                *conversation,
                {"role": "assistant", "content": answer},
                {"role": "user", "content": f"Your answer cannot be used: {reason}. Reply again."},
            ]
        note = f"Note: a plan was refused because {reason}. Write a plan that avoids this."
        return [*messages[:-1], {**last, "content": f"{last['content']}\n{note}"}]

    @staticmethod
    async def _answer(
        agent: ConstellationAgent,
        parsed: ConstellationAgentResponse,
        completion: Any,
        messages: list[dict[str, Any]],
        warnings: list[PlanProblem],
    ) -> ProcessingResult:
        usage = {
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
        }
        await agent.print_response(parsed, usage={**usage, "cost": completion.cost})
        result = llm_result(
            parsed, completion, messages, {"status": parsed.status, "thought": parsed.thought}, usage
        )
        result.data["plan_warnings"] = [p.text for p in warnings]
        return result


@depends_on("parsed_response")
@provides("execution_result", "action_info", "status", "edit_errors", "edit_repairs")
class BaseConstellationActionExecutionStrategy(BaseProcessingStrategy):
    """Turn the answer into MCP calls on the constellation server (they edit the agent's editor)."""

    mode: WeavingMode = WeavingMode.CREATION

    def __init__(self, fail_fast: bool = False) -> None:
        super().__init__(
            name=f"constellation_action_execution_{self.mode.value.lower()}", fail_fast=fail_fast
        )

    def create_actions(
        self, parsed: ConstellationAgentResponse, before: TaskConstellation | None
    ) -> tuple[list[ActionCommandInfo], list[str]]:
        """The calls to make for this answer (``before``: the constellation they apply to), and a
        note for each call the agent had to repair."""
        raise NotImplementedError

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Run the calls."""
        parsed = present(context.local(ConstellationProcessorContext).parsed_response, "parsed_response")
        actions, repairs = self.create_actions(parsed, context.get_global(ContextNames.CONSTELLATION))
        for note in repairs:
            self.logger.info("Constellation edit repaired: %s", note)
        results: list[Result] = []
        if actions:
            commands = [
                Command(tool_name=a.function, parameters=dict(a.arguments), tool_type="action")
                for a in actions
            ]
            results = list(await agent.editor_dispatcher.execute_commands(commands, agent.tool_timeout))
        while len(results) < len(actions):
            results.append(Result(status=ResultStatus.FAILURE, error="No execution result"))
        for action, result in zip(actions, results, strict=True):
            action.status = result.status.value
            action.result = result
        errors = [describe_failure(a, r) for a, r in zip(actions, results, strict=True) if not r.ok]
        for error in errors:
            self.logger.warning("Constellation edit refused: %s", error)
        await agent.publish_actions(self.mode, actions, parsed.status)
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.ACTION_EXECUTION,
            data={
                "execution_result": results,
                "action_info": actions,
                "status": parsed.status,
                "edit_errors": errors,
                "edit_repairs": repairs,
            },
        )


class ConstellationCreationActionExecutionStrategy(BaseConstellationActionExecutionStrategy):
    """Creation: one ``build_constellation(config=<constellation>)`` call."""

    mode = WeavingMode.CREATION

    def create_actions(
        self, parsed: ConstellationAgentResponse, before: TaskConstellation | None
    ) -> tuple[list[ActionCommandInfo], list[str]]:
        """The build call, or nothing when the answer has no constellation."""
        if parsed.constellation is None:
            self.logger.warning("The creation answer has no constellation; nothing to build")
            return [], []
        config = parsed.constellation.to_dict_with_lists()
        build = ActionCommandInfo(function=BUILD_TOOL, arguments={"config": config, "clear_existing": True})
        return [build], []

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Run the build; the global context's constellation is then the editor's (None when the
        build was refused)."""
        outcome = await super().execute(agent, context)
        results: list[Result] = outcome.data.get("execution_result") or []
        built = agent.editor.constellation if results and results[0].ok else None
        context.global_context.set(ContextNames.CONSTELLATION, built)
        return outcome


class ConstellationEditingActionExecutionStrategy(BaseConstellationActionExecutionStrategy):
    """Editing: the answer's tool calls, one MCP call each."""

    mode = WeavingMode.EDITING

    def create_actions(
        self, parsed: ConstellationAgentResponse, before: TaskConstellation | None
    ) -> tuple[list[ActionCommandInfo], list[str]]:
        """The answer's calls that name a function (build_constellation is not the model's to call),
        with taken or missing ids and names repaired (see ``review.repair_edits``)."""
        return repair_edits([a for a in parsed.actions() if a.function != BUILD_TOOL], before)


@depends_on("parsed_response")
@provides("memory_item", "constellation_after")
class ConstellationMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in memory and add its cost and tokens to the session's counters."""

    strategy_name = "constellation_memory_update"
    default_fail_fast = False

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem for this step."""
        local = context.local(ConstellationProcessorContext)
        parsed = present(local.parsed_response, "parsed_response")
        actions = local.action_info
        after = context.get_global(ContextNames.CONSTELLATION)
        after_dict = after.to_dict() if isinstance(after, TaskConstellation) else None
        item = MemoryItem()
        item.add_values_from_dict(
            {
                "step": int(context.get_global(ContextNames.SESSION_STEP) or 0),
                "agent_step": agent.step,
                "weaving_mode": weaving_mode_of(context).value,
                **parsed.model_dump(mode="json", exclude={"constellation", "action"}),
                "action": [a.model_dump(mode="json", exclude={"result"}) for a in actions],
                "function_call": [a.function for a in actions],
                "arguments": [a.arguments for a in actions],
                "edit_errors": local.edit_errors,
                "cost": local.llm_cost or 0.0,
                "tokens": local.tokens or 0,
                "time": time.time(),
            }
        )
        record_step(agent, context, item)
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.MEMORY_UPDATE,
            data={
                "memory_item": item,
                "constellation_after": json.dumps(after_dict) if after_dict else None,
            },
        )


class ConstellationStrategyFactory:
    """Creates the strategies of each phase (spec B §5.3); fail_fast: LLM True, the others False."""

    _action_execution_strategies: ClassVar[
        dict[WeavingMode, type[BaseConstellationActionExecutionStrategy]]
    ] = {
        WeavingMode.CREATION: ConstellationCreationActionExecutionStrategy,
        WeavingMode.EDITING: ConstellationEditingActionExecutionStrategy,
    }

    @staticmethod
    def create_llm_interaction_strategy(fail_fast: bool = True) -> ConstellationLLMInteractionStrategy:
        """The LLM strategy (the same for both modes)."""
        return ConstellationLLMInteractionStrategy(fail_fast=fail_fast)

    @classmethod
    def create_action_execution_strategy(
        cls, mode: WeavingMode | str, fail_fast: bool = False
    ) -> BaseConstellationActionExecutionStrategy:
        """The action strategy of ``mode`` (ValueError for an unknown mode)."""
        try:
            weaving = WeavingMode(str(getattr(mode, "value", mode)).upper())
        except ValueError:
            raise InvalidArgumentError(f"Unsupported mode: {mode!r}; use CREATION or EDITING") from None
        return cls._action_execution_strategies[weaving](fail_fast=fail_fast)

    @staticmethod
    def create_memory_update_strategy(fail_fast: bool = False) -> ConstellationMemoryUpdateStrategy:
        """The memory strategy."""
        return ConstellationMemoryUpdateStrategy(fail_fast=fail_fast)
