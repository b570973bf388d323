"""The ConstellationAgent's phase strategies (spec B §5.3, E §6.4).

LLM interaction (fail-fast) → action execution by weaving mode (creation: one ``build_constellation``
call; editing: the answer's tool calls) → memory update. The constellation is always read back from
the MCP server's answer: every editing tool returns the whole constellation as JSON.
"""

from __future__ import annotations

import json
import time
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
    provides,
    record_step,
)
from starweave.commands import Command, Result, ResultStatus
from starweave.errors import AgentError
from starweave.galaxy.agent.prompter import llm_tools, online_devices
from starweave.galaxy.agent.response import (
    ActionCommandInfo,
    ConstellationAgentResponse,
    WeavingMode,
    creation_json_schema,
    editing_json_schema,
)
from starweave.galaxy.constellation import TaskConstellation

if TYPE_CHECKING:
    from starweave.galaxy.agent.agent import ConstellationAgent

# Enough for a 6-task plan with descriptions and tips (the schema caps every string).
ANSWER_TOKENS = 1500
BUILD_TOOL = "build_constellation"


def weaving_mode_of(context: ProcessingContext) -> WeavingMode:
    """The mode in the global context (ValueError when it is missing or unknown)."""
    raw = context.get_global(ContextNames.WEAVING_MODE)
    if not raw:
        raise ValueError("Weaving mode must be specified in global context")
    return WeavingMode(str(getattr(raw, "value", raw)).upper())


def constellation_from_payload(payload: Any) -> TaskConstellation | None:
    """The constellation in a tool result (JSON text or dict with ``tasks``), else None."""
    if isinstance(payload, str) and ('"tasks"' in payload or '"constellation_id"' in payload):
        return TaskConstellation.from_json(payload)
    if isinstance(payload, dict) and ("tasks" in payload or "constellation_id" in payload):
        return TaskConstellation.from_dict(payload)
    return None


def describe_failure(action: ActionCommandInfo, result: Result) -> str:
    """One line naming a refused call and the server's reason."""
    reason = result.error or str(result.result or "") or result.status.value
    return f"{action.to_representation()} was {result.status.value}: {reason}"


@provides(
    "parsed_response",
    "response_text",
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

    def __init__(self, fail_fast: bool = True) -> None:
        super().__init__(name="constellation_llm_interaction", fail_fast=fail_fast)

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Ask the model."""
        try:
            return await self._ask(agent, context)
        except Exception as exc:  # handle_error re-raises when fail_fast, which is the point
            return self.handle_error(exc, ProcessingPhase.LLM_INTERACTION, context)

    async def _ask(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        mode = weaving_mode_of(context)
        devices: list[dict[str, Any]] = context.get_global(ContextNames.DEVICE_INFO) or []
        constellation = context.get_global(ContextNames.CONSTELLATION)
        request = str(context.get_global(ContextNames.REQUEST) or "")
        messages = agent.message_constructor(request, devices, constellation)
        if mode is WeavingMode.CREATION:
            schema = creation_json_schema([str(d.get("device_id")) for d in online_devices(devices)])
        else:
            schema = editing_json_schema(llm_tools(agent.editing_tools))
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
        last_error = ""
        for _attempt in range(max(1, agent.json_retries)):
            completion = await agent.llm.complete(conversation, schema=schema, max_tokens=ANSWER_TOKENS)
            try:
                parsed = ConstellationAgentResponse.model_validate(completion.parsed or {})
            except ValidationError as exc:
                last_error = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or '$'}: {err['msg']}" for err in exc.errors()
                )
                self.logger.info("ConstellationAgent answer rejected: %s", last_error)
                conversation += [
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": f"Your answer could not be used: {last_error}. Reply again."},
                ]
                continue
            await agent.print_response(
                parsed,
                usage={
                    "prompt_tokens": completion.usage.prompt_tokens,
                    "completion_tokens": completion.usage.completion_tokens,
                    "cost": completion.cost,
                },
            )
            return llm_result(
                parsed,
                completion,
                messages,
                {"status": parsed.status, "thought": parsed.thought},
                {
                    "prompt_tokens": completion.usage.prompt_tokens,
                    "completion_tokens": completion.usage.completion_tokens,
                },
            )
        raise AgentError(
            f"The model's answer was not a valid ConstellationAgent response after {agent.json_retries} "
            f"attempts; last error: {last_error}. Use a stronger model or raise json_retries."
        )


@depends_on("parsed_response")
@provides("execution_result", "action_info", "status", "edit_errors")
class BaseConstellationActionExecutionStrategy(BaseProcessingStrategy):
    """Turn the answer into MCP calls on the constellation server and read the constellation back."""

    mode: WeavingMode = WeavingMode.CREATION

    def __init__(self, fail_fast: bool = False) -> None:
        super().__init__(
            name=f"constellation_action_execution_{self.mode.value.lower()}", fail_fast=fail_fast
        )

    def create_actions(self, parsed: ConstellationAgentResponse) -> list[ActionCommandInfo]:
        """The calls to make for this answer."""
        raise NotImplementedError

    def sync_constellation(
        self, actions: list[ActionCommandInfo], results: list[Result], context: ProcessingContext
    ) -> None:
        """Put the constellation the calls produced into the global context."""
        raise NotImplementedError

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Run the calls and sync the constellation."""
        try:
            parsed: ConstellationAgentResponse = context.get_local("parsed_response")
            actions = self.create_actions(parsed)
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
            self.sync_constellation(actions, results, context)
            await agent.publish_actions(self.mode, actions, parsed.status)
            return ProcessingResult(
                success=True,
                phase=ProcessingPhase.ACTION_EXECUTION,
                data={
                    "execution_result": results,
                    "action_info": actions,
                    "status": parsed.status,
                    "edit_errors": errors,
                },
            )
        except Exception as exc:
            return self.handle_error(exc, ProcessingPhase.ACTION_EXECUTION, context)


class ConstellationCreationActionExecutionStrategy(BaseConstellationActionExecutionStrategy):
    """Creation: one ``build_constellation(config=<constellation>)`` call."""

    mode = WeavingMode.CREATION

    def create_actions(self, parsed: ConstellationAgentResponse) -> list[ActionCommandInfo]:
        """The build call, or nothing when the answer has no constellation."""
        if parsed.constellation is None:
            self.logger.warning("The creation answer has no constellation; nothing to build")
            return []
        config = parsed.constellation.to_dict_with_lists()
        return [ActionCommandInfo(function=BUILD_TOOL, arguments={"config": config, "clear_existing": True})]

    def sync_constellation(
        self, actions: list[ActionCommandInfo], results: list[Result], context: ProcessingContext
    ) -> None:
        """The first result's constellation (None when the build was refused)."""
        built = constellation_from_payload(results[0].result) if results and results[0].ok else None
        context.global_context.set(ContextNames.CONSTELLATION, built)


class ConstellationEditingActionExecutionStrategy(BaseConstellationActionExecutionStrategy):
    """Editing: the answer's tool calls, one MCP call each."""

    mode = WeavingMode.EDITING

    def create_actions(self, parsed: ConstellationAgentResponse) -> list[ActionCommandInfo]:
        """The answer's calls that name a function (build_constellation is not the model's to call)."""
        return [a for a in parsed.actions() if a.function != BUILD_TOOL]

    def sync_constellation(
        self, actions: list[ActionCommandInfo], results: list[Result], context: ProcessingContext
    ) -> None:
        """The last successful result's constellation; the context keeps the old one if none."""
        for result in reversed(results):
            if not result.ok:
                continue
            found = constellation_from_payload(result.result)
            if found is not None:
                context.global_context.set(ContextNames.CONSTELLATION, found)
                self.logger.info("Synced constellation: %s", found.constellation_id)
                return


@depends_on("parsed_response")
@provides("memory_item", "constellation_after")
class ConstellationMemoryUpdateStrategy(BaseProcessingStrategy):
    """Record the step in memory and add its cost and tokens to the session's counters."""

    def __init__(self, fail_fast: bool = False) -> None:
        super().__init__(name="constellation_memory_update", fail_fast=fail_fast)

    async def execute(self, agent: ConstellationAgent, context: ProcessingContext) -> ProcessingResult:
        """Add a MemoryItem for this step."""
        try:
            parsed: ConstellationAgentResponse = context.get_local("parsed_response")
            actions: list[ActionCommandInfo] = context.get_local("action_info") or []
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
                    "edit_errors": context.get_local("edit_errors") or [],
                    "cost": context.get_local("llm_cost") or 0.0,
                    "tokens": context.get_local("tokens") or 0,
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
        except Exception as exc:
            return self.handle_error(exc, ProcessingPhase.MEMORY_UPDATE, context)


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
            raise ValueError(f"Unsupported mode: {mode!r}; use CREATION or EDITING") from None
        return cls._action_execution_strategies[weaving](fail_fast=fail_fast)

    @staticmethod
    def create_memory_update_strategy(fail_fast: bool = False) -> ConstellationMemoryUpdateStrategy:
        """The memory strategy."""
        return ConstellationMemoryUpdateStrategy(fail_fast=fail_fast)

    @classmethod
    def create_all_strategies(
        cls,
        mode: WeavingMode | str,
        llm_fail_fast: bool = True,
        action_fail_fast: bool = False,
        memory_fail_fast: bool = False,
    ) -> dict[str, BaseProcessingStrategy]:
        """All three, keyed ``llm_interaction``, ``action_execution``, ``memory_update``."""
        return {
            "llm_interaction": cls.create_llm_interaction_strategy(llm_fail_fast),
            "action_execution": cls.create_action_execution_strategy(mode, action_fail_fast),
            "memory_update": cls.create_memory_update_strategy(memory_fail_fast),
        }

    @classmethod
    def get_supported_weaving_modes(cls) -> list[str]:
        """The modes with an action strategy."""
        return [m.value for m in cls._action_execution_strategies]
