"""ConstellationAgent: plans a request as a TaskConstellation and edits it as results arrive.

Creation mode asks the model for a whole DAG and builds it with one ``build_constellation`` call on the
constellation MCP server; editing mode shows the model the DAG with its results and runs the model's
tool calls there (spec B §5, E §6). The server edits the ConstellationEditor's constellation, and that
one object is also the one the orchestrator runs: edits land in place, between the orchestrator's own
steps, and the synchronizer holds new assignments back until the review is over. The orchestration runs as a
background task started by the START state; the CONTINUE state waits for completion events with a
timeout and reviews once per batch. Edits the editor refuses go back to the model with its reasons
(at most ``edit_retries`` times per review); in review mode "fast" a review whose answer is known
needs no model call at all (``review.review_decision``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, ClassVar

from starweave.agent import AgentRegistry, AgentState, BasicAgent, Context, ContextNames
from starweave.agent.guards import GuardState, GuardTable
from starweave.errors import AgentError, InvalidArgumentError
from starweave.galaxy.agent.editing import load_editing_tools, log_skipped_review, retry_turns
from starweave.galaxy.agent.inbox import next_batch, orchestration_over
from starweave.galaxy.agent.local import ConstellationProcessorContext
from starweave.galaxy.agent.plan_guards import PlanStep, plan_guards
from starweave.galaxy.agent.processor import ConstellationAgentProcessor
from starweave.galaxy.agent.prompter import ConstellationPrompter, ConstellationPrompterFactory
from starweave.galaxy.agent.publishing import ConstellationEventsMixin
from starweave.galaxy.agent.response import (
    ConstellationAgentResponse,
    ConstellationAgentStatus,
    WeavingMode,
)
from starweave.galaxy.agent.review import REVIEW_MODES, ReviewDecision, final_answer, review_decision
from starweave.galaxy.agent.states import ConstellationAgentStateManager, StartConstellationAgentState
from starweave.galaxy.constellation import ConstellationEditor, TaskConstellation, snapshot
from starweave.galaxy.events import (
    ConstellationEvent,
    Event,
    EventBus,
    EventType,
    TaskEvent,
)

logger = logging.getLogger(__name__)
DeviceInfoProvider = Callable[[], list[dict[str, Any]]]


@AgentRegistry.register(agent_name="ConstellationAgent", processor_cls=ConstellationAgentProcessor)
class ConstellationAgent(ConstellationEventsMixin, BasicAgent):
    """Weaves a request into a TaskConstellation, launches its orchestration and edits it as tasks end.

    ``llm`` is an LLMClient; ``editor_dispatcher`` a command dispatcher whose action server is the
    constellation MCP server over ``editor``, whose constellation is the one the agent plans into and
    the orchestrator runs (the one owner of the DAG); ``device_info_provider`` returns
    ``AgentProfile.to_dict()`` of every device. ``continue_timeout`` bounds each wait for a completion
    event (seconds); ``batch_window`` how long to wait after the first event for others to join its
    batch (0: only those already queued); ``completion_check_timeout`` how long an edit of a finished
    DAG waits for the orchestration's CONSTELLATION_COMPLETED; ``json_retries`` how often an answer that
    is JSON but not a valid response (or a plan that cannot work) is asked again (unparsable JSON is
    retried by the LLM layer itself); ``edit_retries`` how often refused edits go back to the model
    within one review; ``review_mode`` is "fast" (ask the model only when its answer can change
    something) or "always" (the reference: every batch of results is reviewed); ``guards`` whether
    the plan guards are on (``GUARDS`` in system.yaml).
    """

    state_manager_cls: ClassVar[type[ConstellationAgentStateManager]] = ConstellationAgentStateManager
    status_enum = ConstellationAgentStatus
    _constellation_creation_tool_name = "build_constellation"

    def __init__(
        self,
        orchestrator: Any,
        llm: Any,
        editor_dispatcher: Any,
        event_bus: EventBus,
        device_info_provider: DeviceInfoProvider,
        name: str = "constellation_agent",
        json_retries: int = 3,
        *,
        editor: ConstellationEditor,
        continue_timeout: float = 1800.0,
        completion_check_timeout: float = 1.0,
        batch_window: float = 0.0,
        tool_timeout: float = 60.0,
        templates: dict[WeavingMode, tuple[str, str]] | None = None,
        review_mode: str = "fast",
        edit_retries: int = 2,
        guards: bool = True,
    ) -> None:
        if review_mode not in REVIEW_MODES:
            raise InvalidArgumentError(
                f"review_mode must be one of {', '.join(REVIEW_MODES)}, not {review_mode!r}"
            )
        super().__init__(name)
        self._orchestrator = orchestrator
        self.llm = llm
        self.editor_dispatcher = editor_dispatcher
        self.event_bus = event_bus
        self.device_info_provider = device_info_provider
        self.editor = editor
        self.json_retries = max(1, json_retries)
        self.continue_timeout = continue_timeout
        self.completion_check_timeout = completion_check_timeout
        self.batch_window = batch_window
        self.tool_timeout = tool_timeout
        self.templates = templates or {}
        self.review_mode = review_mode
        self.edit_retries = max(0, edit_retries)
        # The plan guards (plan_guards.py) and what they remember of the current request.
        self.plan_guards: GuardTable[PlanStep] = plan_guards(guards)
        self.plan_guard_state = GuardState()
        self.final_round = False  # this review may only give the request's final answer
        # The turns after the review's first prompt when refused edits go back to the model.
        self._round_messages: list[dict[str, Any]] | None = None
        self._followup: list[dict[str, Any]] = []
        self._status = ConstellationAgentStatus.START.value
        self._current_constellation: TaskConstellation | None = None
        self._task_completion_queue: asyncio.Queue[Event] = asyncio.Queue()
        self._constellation_completion_queue: asyncio.Queue[Event] = asyncio.Queue()
        self._orchestration_task: asyncio.Task[Any] | None = None
        self._orchestration_runs = 0
        self.editing_tools: list[dict[str, Any]] = []
        self._tools_loaded = False
        self.prompter: ConstellationPrompter | None = None
        self.error_message = ""
        self.last_edit_errors: list[str] = []
        self.set_state(self.default_state)

    # -- properties ---------------------------------------------------------------------------
    @property
    def default_state(self) -> AgentState:
        """A new agent starts in START."""
        return StartConstellationAgentState()

    @property
    def orchestrator(self) -> Any:
        """The orchestrator that runs the constellation."""
        return self._orchestrator

    @property
    def current_constellation(self) -> TaskConstellation | None:
        """The editor's constellation once a valid plan was built into it (the one being run)."""
        return self._current_constellation

    @property
    def task_completion_queue(self) -> asyncio.Queue[Event]:
        """TASK_COMPLETED / TASK_FAILED events waiting for the CONTINUE state."""
        return self._task_completion_queue

    @property
    def constellation_completion_queue(self) -> asyncio.Queue[Event]:
        """CONSTELLATION_COMPLETED events."""
        return self._constellation_completion_queue

    @property
    def orchestration_task(self) -> asyncio.Task[Any] | None:
        """The running (or last) orchestration task; the session may await or cancel it."""
        return self._orchestration_task

    # -- running ------------------------------------------------------------------------------
    def launch_orchestration(self, timing_info: dict[str, Any] | None = None) -> asyncio.Task[Any]:
        """Start orchestrating the current constellation in the background (at most one at a time)."""
        if self._current_constellation is None:
            raise AgentError("There is no constellation to orchestrate; create one first")
        running = self._orchestration_task
        if running is not None and not running.done():
            return running
        self._orchestration_runs += 1
        self._orchestration_task = asyncio.create_task(
            self._orchestrator.orchestrate_constellation(
                self._current_constellation, metadata=timing_info or {}
            ),
            name=f"orchestration:{self._current_constellation.constellation_id}:{self._orchestration_runs}",
        )
        return self._orchestration_task

    async def cancel_orchestration(self) -> None:
        """Cancel the orchestration task (if running) and wait for it to end."""
        task = self._orchestration_task
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def orchestration_error(self) -> BaseException | None:
        """The exception the last orchestration ended with, if any."""
        task = self._orchestration_task
        if task is None or not task.done() or task.cancelled():
            return None
        return task.exception()

    # -- queues -------------------------------------------------------------------------------
    async def add_task_completion_event(self, event: Event) -> None:
        """Queue a TASK_COMPLETED / TASK_FAILED event for the CONTINUE state (TypeError otherwise)."""
        if not isinstance(event, TaskEvent) or event.event_type not in (
            EventType.TASK_COMPLETED,
            EventType.TASK_FAILED,
        ):
            raise TypeError(f"Expected a TASK_COMPLETED or TASK_FAILED TaskEvent, got {event!r}")
        await self._task_completion_queue.put(event)

    async def add_constellation_completion_event(self, event: Event) -> None:
        """Queue a CONSTELLATION_COMPLETED event (TypeError otherwise)."""
        if (
            not isinstance(event, ConstellationEvent)
            or event.event_type is not EventType.CONSTELLATION_COMPLETED
        ):
            raise TypeError(f"Expected a CONSTELLATION_COMPLETED ConstellationEvent, got {event!r}")
        await self._constellation_completion_queue.put(event)

    async def wait_for_completion_events(self) -> list[Event]:
        """The next batch of completion events (see ``inbox.next_batch``): waits at most
        ``continue_timeout`` for the first; [] when the orchestration ended with none queued."""
        return await next_batch(
            self._task_completion_queue, self._orchestration_task, self.continue_timeout, self.batch_window
        )

    # -- prompts ------------------------------------------------------------------------------
    def get_prompter(self, mode: WeavingMode | str) -> ConstellationPrompter:
        """The prompter of ``mode`` (templates from ``templates`` or the shipped ones)."""
        weaving = WeavingMode(str(getattr(mode, "value", mode)).upper())
        main, examples = self.templates.get(weaving, (None, None))
        return ConstellationPrompterFactory.create_prompter(weaving, main, examples)

    def message_constructor(
        self,
        request: str,
        device_info: list[dict[str, Any]],
        constellation: TaskConstellation | None = None,
    ) -> list[dict[str, Any]]:
        """``[system, user]`` for the current mode (ValueError when no prompter was set up); when
        refused edits go back to the model, the round's first prompt plus the retry turns."""
        if self.prompter is None:
            raise InvalidArgumentError(
                "The prompter is not initialised; process_creation/process_editing set it"
            )
        if self._followup and self._round_messages is not None:
            return [*self._round_messages, *self._followup]
        final = self.final_round and self.prompter.mode is WeavingMode.EDITING
        user = self.prompter.user_prompt_construction(request, device_info, constellation, final)
        system = self.prompter.system_prompt_construction(request, final, constellation)
        messages = self.prompter.prompt_construction(system, user)
        self._round_messages = messages
        return messages

    async def context_provision(self, context: Context | None = None, mask_creation: bool = True) -> None:
        """Load the editing tools from the MCP server once (``list_tools``) into the prompter."""
        if not self._tools_loaded:
            hidden = {self._constellation_creation_tool_name} if mask_creation else set()
            tools = await load_editing_tools(self.editor_dispatcher, self.tool_timeout, hidden)
            if tools is not None:
                self.editing_tools, self._tools_loaded = tools, True
        if self.prompter is not None:
            self.prompter.create_api_prompt_template(self.editing_tools)

    # -- creation -----------------------------------------------------------------------------
    def _prepare(self, context: Context, mode: WeavingMode, constellation: TaskConstellation | None) -> None:
        self.prompter = self.get_prompter(mode)
        context.set(ContextNames.WEAVING_MODE, mode.value)
        context.set(ContextNames.DEVICE_INFO, list(self.device_info_provider()))
        context.set(ContextNames.CONSTELLATION, constellation)

    async def _run_step(
        self, context: Context
    ) -> tuple[ConstellationAgentResponse, ConstellationProcessorContext]:
        """Run one step; return its answer and the step's record (its typed local fields)."""
        record = (await self.process(context)).local
        if not isinstance(record, ConstellationProcessorContext) or record.parsed_response is None:
            raise AgentError("The ConstellationAgent step produced no response")
        return record.parsed_response, record

    async def process_creation(
        self, context: Context | None = None
    ) -> tuple[TaskConstellation | None, dict[str, float]]:
        """Ask for a plan and build it; returns the (valid) constellation, or None with status FAIL/FINISH."""
        context = context if context is not None else Context()
        self._prepare(context, WeavingMode.CREATION, None)
        start = time.time()
        parsed, record = await self._run_step(context)
        end = time.time()
        timing = {
            "processing_start_time": start,
            "processing_end_time": end,
            "processing_duration": end - start,
        }
        self.step += 1
        status = (
            ConstellationAgentStatus.CONTINUE.value
            if parsed.status == ConstellationAgentStatus.START.value
            else parsed.status
        )
        built: TaskConstellation | None = context.get(ContextNames.CONSTELLATION)
        if status != ConstellationAgentStatus.CONTINUE.value:
            self.status = status
            if status == ConstellationAgentStatus.FAIL.value:
                self.error_message = f"The model gave up planning: {parsed.results or parsed.thought}"
            return None, timing
        errors = list(record.edit_errors)
        if built is None:
            self.status = ConstellationAgentStatus.FAIL.value
            reason = "; ".join(errors) or "the answer had no constellation"
            self.error_message = f"The planned constellation could not be built: {reason}"
            return None, timing
        valid, problems = built.validate_dag()
        if not valid:
            self.status = ConstellationAgentStatus.FAIL.value
            self.error_message = f"The planned constellation is invalid: {'; '.join(problems)}"
            return None, timing
        self.status = status
        self._current_constellation = built
        return built, timing

    # -- editing ------------------------------------------------------------------------------
    async def process_editing(
        self, context: Context | None = None, task_ids: list[str] | None = None
    ) -> TaskConstellation:
        """One review of the running constellation after ``task_ids`` ended; the model's edits are
        made in place (the editor refuses any that would break the DAG) and the constellation is
        returned. In review mode "fast" a review whose answer is known asks no model."""
        context = context if context is not None else Context()
        live = self._current_constellation
        if live is None:
            raise AgentError("Nothing to edit: no constellation was created")
        decision = review_decision(live, task_ids, self.review_mode) if task_ids else None
        if decision is not None and not decision.ask_model:
            return await self._answer_without_model(context, live, task_ids or [], decision)
        self.final_round = decision is not None and decision.finish
        before = snapshot(live)  # CONSTELLATION_MODIFIED reports what the review changed
        self._prepare(context, WeavingMode.EDITING, live)
        await self.context_provision(context)
        start = time.time()
        parsed = await self._edit_with_retries(context)
        return await self._conclude(parsed, before, live, task_ids or [], start)

    async def _conclude(
        self,
        parsed: ConstellationAgentResponse,
        before: TaskConstellation,
        after: TaskConstellation,
        task_ids: list[str],
        start: float,
    ) -> TaskConstellation:
        """Take the review's status and constellation, and publish CONSTELLATION_MODIFIED."""
        self.status = self._decide_status(parsed, after)
        if self.status == ConstellationAgentStatus.CONTINUE.value:
            await self._handle_constellation_completion(before, after)
        if self.status == ConstellationAgentStatus.FAIL.value:
            self.error_message = f"The model gave up: {parsed.results or parsed.thought}"
        self._current_constellation = after
        end = time.time()
        timing = {
            "processing_start_time": start,
            "processing_end_time": end,
            "processing_duration": end - start,
        }
        await self._publish_constellation_modified_event(before, after, task_ids, timing)
        return after

    async def _edit_with_retries(self, context: Context) -> ConstellationAgentResponse:
        """Ask for edits; refused ones go back to the model with the editor's reasons (at most
        ``edit_retries`` times). Every refusal of the round ends up in ``last_edit_errors``."""
        self.last_edit_errors = []
        refused: list[tuple[str, dict[str, Any]]] | None = None
        self._round_messages, self._followup = None, []
        try:
            for attempt in range(self.edit_retries + 1):
                parsed, record = await self._run_step(context)
                errors = list(record.edit_errors)
                self.last_edit_errors += errors
                calls = [(a.function, a.arguments) for a in parsed.actions()]
                again, refused = refused == calls, calls  # the same refused calls again: stop asking
                if not errors or again or attempt == self.edit_retries or parsed.status != "CONTINUE":
                    return parsed
                answer = str(record.response_text or parsed.model_dump_json())
                logger.info("Giving %d refused edit(s) back to the model: %s", len(errors), "; ".join(errors))
                repairs = list(record.edit_repairs)
                current = context.get(ContextNames.CONSTELLATION)
                self._followup += retry_turns(answer, errors, repairs, current)
                self.step += 1
            return parsed
        finally:
            self._round_messages, self._followup = None, []

    async def _answer_without_model(
        self, context: Context, before: TaskConstellation, task_ids: list[str], decision: ReviewDecision
    ) -> TaskConstellation:
        """The review whose answer is known (review mode "fast"): no edit, CONTINUE or FINISH."""
        self._prepare(context, WeavingMode.EDITING, before)
        answer = final_answer(before) if decision.finish else (decision.reason if decision.fail else None)
        status = (
            ConstellationAgentStatus.FINISH
            if decision.finish
            else (ConstellationAgentStatus.FAIL if decision.fail else ConstellationAgentStatus.CONTINUE)
        )
        parsed = ConstellationAgentResponse(
            thought=f"Answered without the model: {decision.reason}.",
            status=status.value,
            action=[],
            results=answer,
        )
        logger.info("Review of %s without a model call: %s", task_ids, decision.reason)
        await self.print_response(parsed, usage={"prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0})
        if answer:
            context.set(ContextNames.ROUND_RESULT, answer)
        log_skipped_review(context, self.name, parsed, decision.reason, before, task_ids)
        self.last_edit_errors = []
        after = await self._conclude(parsed, before, before, task_ids, time.time())
        self.error_message = decision.reason if decision.fail else self.error_message
        return after

    def _decide_status(self, parsed: ConstellationAgentResponse, after: TaskConstellation) -> str:
        status = parsed.status
        running = self._orchestration_task is not None and not self._orchestration_task.done()
        if status == ConstellationAgentStatus.FINISH.value and after.get_running_tasks():
            logger.warning("The model said FINISH while tasks are running; continuing instead")
            return ConstellationAgentStatus.CONTINUE.value
        if status == ConstellationAgentStatus.START.value and running:
            return ConstellationAgentStatus.CONTINUE.value  # never two orchestrations of one constellation
        return status

    async def _handle_constellation_completion(
        self, before: TaskConstellation, after: TaskConstellation
    ) -> None:
        """If the orchestration already ended but the edit left work to do, go back to START (relaunch)."""
        queue, task = self._constellation_completion_queue, self._orchestration_task
        if await orchestration_over(queue, task, before, after, self.completion_check_timeout):
            logger.info("The orchestration had completed; relaunching it on the edited constellation")
            self.status = ConstellationAgentStatus.START.value
