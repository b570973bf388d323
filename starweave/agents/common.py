"""What the device agents (LinuxAgent, HostAgent, AppAgent) share beyond the kernel.

Their answers are pydantic models with the same kinds of fields (a status from a fixed list,
arguments that may come as null, lists that may come as one string), their JSON schemas describe
tool arguments alike, and the HostAgent and the AppAgent count their model calls the same way.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BeforeValidator

from starweave.agent import (
    AgentStatus,
    BaseProcessingStrategy,
    BasicAgent,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    ProcessingStrategy,
    count_llm_call,
)
from starweave.agent.processor import PhaseStrategies

if TYPE_CHECKING:
    from starweave.agent.blackboard import Blackboard
    from starweave.llm.base import Completion

#: The output of a step that ran no action.
NO_ACTION_RUN = "(no action was run)"
#: Galaxy appends the results of a task's prerequisites to its request under this header: what
#: follows is other devices' work, given as data, not part of what this agent is asked to do.
PREREQUISITE_RESULTS_HEADER = (
    "Results of prerequisite tasks (already done elsewhere; use these values, do not run them):"
)


# Galaxy's (and the reference's) framing of a task sent to a device: TaskStar.to_request_string().
_TASK_FRAME = re.compile(
    r"\ATask Description: (?P<description>.*?)\nTips for Completion:\n(?P<tips>.*?)(?P<rest>\n\n.*)?\Z",
    re.DOTALL,
)
NO_TIPS = "No tips available."


def plain_request(request: str) -> str:
    """``request`` as the model should read it: a Galaxy task's frame (``Task Description: …``,
    ``Tips for Completion: No tips available.``) reduced to the description, its tips (if any)
    kept under ``Tips:``. A small model takes the frame's headings and an empty tip list for
    part of the task; anything else is returned unchanged."""
    found = _TASK_FRAME.match(request)
    if found is None:
        return request
    text = found["description"].strip()
    tips = found["tips"].rstrip()
    if tips.strip() and tips.strip() != NO_TIPS:
        text += "\nTips:\n" + tips
    return text + (found["rest"] or "")


#: ``await asker(question) -> answer``; ``""`` means the user gave no answer (or was not asked).
Asker = Callable[[str], Awaitable[str]]
#: What the model is told when its question got no answer (PENDING without a user, as the reference).
NO_ANSWER = (
    "No answer is available: the user was not asked or did not answer. Go on with what you know, "
    "or leave a placeholder; do not ask the same question again."
)


class PendingState:
    """Mixin of the agents' PENDING states: ask the last step's question(s) (the agent's
    ``ask_user``), then continue, whether or not an answer came (spec D §16: always → CONTINUE)."""

    async def handle(self, agent: BasicAgent, context: Any = None) -> None:
        """Ask, then CONTINUE."""
        ask_user = getattr(agent, "ask_user", None)
        if ask_user is not None:
            await ask_user()
        agent.status = AgentStatus.CONTINUE.value


async def ask_questions(asker: Asker | None, blackboard: Blackboard, questions: Iterable[str]) -> None:
    """PENDING: ask each question and put the pair on the Blackboard's questions, where the next
    prompt shows it; an empty answer (or nobody to ask) is recorded as :data:`NO_ANSWER`."""
    for question in questions:
        if not question.strip():
            continue
        answer = await asker(question) if asker is not None else ""
        blackboard.add_questions({"question": question, "answer": answer.strip() or NO_ANSWER})


_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def _empty_if_none(value: Any) -> Any:
    return {} if value is None else value


def as_list(value: Any) -> Any:
    """None as ``[]`` and one string as a one-item list (models write either for a list)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else value


def status_checker(allowed: tuple[str, ...]) -> Callable[[str], str]:
    """A validator that upper-cases a status and refuses one not in ``allowed``."""

    def check(value: str) -> str:
        value = value.strip().upper()
        if value not in allowed:
            raise ValueError(f"status must be one of {', '.join(allowed)}, not {value!r}")
        return value

    return check


#: Tool arguments; a null from the model counts as no arguments.
Arguments = Annotated[dict[str, Any], BeforeValidator(_empty_if_none)]
#: A list of strings; null and a lone string are accepted (see :func:`as_list`).
TextList = Annotated[list[str], BeforeValidator(as_list)]


def call_string(function: str, arguments: dict[str, Any]) -> str:
    """A readable tool call, e.g. ``execute_command(command='ls')``, or ``(no action)``."""
    return BasicAgent.get_command_string(function, arguments) if function else "(no action)"


def argument_schema(
    tools: list[dict[str, Any]], long_fields: tuple[str, ...] = ("text", "content")
) -> dict[str, Any]:
    """The union of the tools' parameters with their JSON types; none is required.

    Strings are capped at 400 characters, those named in ``long_fields`` at 2000.
    """
    properties: dict[str, Any] = {}
    for tool in tools:
        for name, spec in (tool.get("input_schema") or {}).get("properties", {}).items():
            if name in properties or not isinstance(spec, dict):
                continue
            kind = spec.get("type")
            if isinstance(kind, str) and kind in _JSON_TYPES:
                prop: dict[str, Any] = {"type": kind}
            else:
                # Optional parameters come as anyOf [T, null]; take the first concrete type.
                kinds = [s.get("type") for s in spec.get("anyOf", []) if s.get("type") not in (None, "null")]
                prop = {"type": kinds[0] if kinds and kinds[0] in _JSON_TYPES else "string"}
            if prop["type"] == "string":
                prop["maxLength"] = 2000 if name in long_fields else 400
            properties[name] = prop
    return {"type": "object", "properties": properties, "additionalProperties": False}


def noted_output(note: str | None, output: str) -> str:
    """A step's output with this step's ``note`` (if any) on the line before it."""
    return f"{note}\n{output}" if note else output


async def complete_counted(
    agent: Any,
    context: ProcessingContext,
    messages: list[dict[str, Any]],
    schema: dict[str, Any],
    max_tokens: int,
) -> Completion:
    """Ask ``agent.llm`` for a schema answer and count the attempts on the agent and in the session."""
    completion: Completion = await agent.llm.complete(messages, schema=schema, max_tokens=max_tokens)
    agent.llm_calls += completion.attempts
    count_llm_call(context.global_context, completion.attempts)
    return completion


class AmendMemoryStrategy(BaseProcessingStrategy):
    """MEMORY_UPDATE of a confirmation step: the memory record of the step that asked takes the
    ``amended_memory`` values (the confirmed call's output and status), so the model's next prompt
    shows what really happened instead of "waiting for confirmation"."""

    strategy_name = "amend_memory"
    default_fail_fast = False

    async def execute(self, agent: BasicAgent, context: ProcessingContext) -> ProcessingResult:
        """Update the latest memory item."""
        latest = agent.memory.get_latest_item()
        for key, value in (context.local_context.amended_memory or {}).items():
            if latest is not None:
                latest.set_value(key, value)
        return ProcessingResult(success=True, phase=ProcessingPhase.MEMORY_UPDATE)


class ConfirmedActionStrategy(BaseProcessingStrategy):
    """ACTION_EXECUTION of a confirmation step: the user's decision on what the agent held back.

    The agent keeps what it held back in its attribute :attr:`held_attribute`; the step takes it
    off and subclasses act on the user's answer (:meth:`decide`, returning the status and the
    step's data). With nothing held back the step settles :attr:`nothing_held` (a status and the
    note that explains it, if any).
    """

    default_fail_fast = False
    held_attribute: ClassVar[str]
    nothing_held: ClassVar[tuple[str, str]] = ("CONTINUE", "")

    @abstractmethod
    async def decide(self, agent: Any, context: ProcessingContext, held: Any) -> tuple[str, dict[str, Any]]:
        """Ask the user about ``held`` and act on the answer; the step's status and data."""

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        """Decide about the held item (or settle :attr:`nothing_held`)."""
        held = getattr(agent, self.held_attribute)
        setattr(agent, self.held_attribute, None)  # decided once, whatever the answer
        if held is None:
            status, note = self.nothing_held
            data: dict[str, Any] = {"note": note, "result": note, "output": note} if note else {}
        else:
            status, data = await self.decide(agent, context, held)
        return ProcessingResult(
            success=True,
            data={**data, "status": status},
            phase=ProcessingPhase.ACTION_EXECUTION,
            status=status,
        )


StrategyFactory = Callable[[], ProcessingStrategy]


def device_phases(
    action: StrategyFactory,
    memory: StrategyFactory,
    llm: StrategyFactory | None = None,
    data: StrategyFactory | None = None,
) -> PhaseStrategies:
    """A device agent's strategy table: ``data`` (if any) → ``llm`` (if any) → ``action`` → ``memory``."""
    phases = {
        ProcessingPhase.DATA_COLLECTION: data,
        ProcessingPhase.LLM_INTERACTION: llm,
        ProcessingPhase.ACTION_EXECUTION: action,
        ProcessingPhase.MEMORY_UPDATE: memory,
    }
    return MappingProxyType({phase: make for phase, make in phases.items() if make is not None})


def action_failure(status: str) -> Mapping[ProcessingPhase, str]:
    """A processor's ``failure_status``: a crash while running the actions settles ``status``."""
    return MappingProxyType({ProcessingPhase.ACTION_EXECUTION: status})


def confirm_strategies(action: StrategyFactory) -> PhaseStrategies:
    """The phases of a confirmation step: ``action`` (the user's decision) in ACTION_EXECUTION, then
    :class:`AmendMemoryStrategy` in MEMORY_UPDATE (no model call, no data collection)."""
    return device_phases(action, AmendMemoryStrategy)
