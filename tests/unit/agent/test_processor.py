"""ProcessorTemplate: phase order, dependency checks, two-level fail_fast, middleware order."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pytest

from starweave.agent import (
    BaseProcessingStrategy,
    BasicProcessorContext,
    ComposedStrategy,
    Context,
    ContextNames,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    ProcessorMiddleware,
    ProcessorTemplate,
    depends_on,
    provides,
)
from starweave.errors import ProcessingException

P = ProcessingPhase


class Recorder(BaseProcessingStrategy):
    """Appends its name to ``agent.calls`` and returns ``data`` (or a failure / an exception)."""

    def __init__(
        self,
        name: str,
        data: dict[str, Any] | None = None,
        *,
        fail: bool = False,
        boom: bool = False,
        fail_fast: bool = True,
    ) -> None:
        super().__init__(name=name, fail_fast=fail_fast)
        self.data = data or {}
        self.fail = fail
        self.boom = boom

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        agent.calls.append(self.name)
        if self.boom:
            raise RuntimeError(f"{self.name} exploded")
        if self.fail:
            return ProcessingResult(success=False, data=self.data, error=f"{self.name} failed")
        return ProcessingResult(success=True, data=self.data)


@dataclass
class ToyContext(BasicProcessorContext):
    """The local fields these tests' strategies provide."""

    screenshot: str | None = None
    seen: str | None = None
    plan: str | None = None
    got: tuple[Any, Any] | None = None
    a: int | None = None
    b: int | None = None
    memory_written: bool | None = None


class Toy:
    """A minimal agent: processors only need ``step`` and somewhere to record calls."""

    def __init__(self) -> None:
        self.step = 3
        self.calls: list[str] = []


def make_processor(
    strategies: dict[ProcessingPhase, Any],
    middleware: list[ProcessorMiddleware] | None = None,
    context: Context | None = None,
    agent: Toy | None = None,
) -> ProcessorTemplate:
    class Proc(ProcessorTemplate):
        processor_context_class = ToyContext

        def _setup_strategies(self) -> None:
            self.strategies.update(strategies)

        def _setup_middleware(self) -> None:
            self.middleware_chain.extend(middleware or [])

    return Proc(agent or Toy(), context or Context())


async def test_all_six_phases_run_in_fixed_order() -> None:
    # Registered in scrambled order on purpose.
    order = [P.CLEANUP, P.MEMORY_UPDATE, P.SETUP, P.ACTION_EXECUTION, P.LLM_INTERACTION, P.DATA_COLLECTION]
    agent = Toy()
    proc = make_processor({p: Recorder(p.name) for p in order}, agent=agent)
    result = await proc.process()
    assert agent.calls == [p.name for p in ProcessingPhase]
    assert result.success
    assert list(proc.processing_context.phase_results) == list(ProcessingPhase)
    assert all(r.execution_time > 0 for r in proc.processing_context.phase_results.values())


async def test_unregistered_phases_are_skipped() -> None:
    agent = Toy()
    proc = make_processor({P.LLM_INTERACTION: Recorder("llm"), P.MEMORY_UPDATE: Recorder("mem")}, agent=agent)
    await proc.process()
    assert agent.calls == ["llm", "mem"]
    assert set(proc.processing_context.phase_results) == {P.LLM_INTERACTION, P.MEMORY_UPDATE}


async def test_successful_data_is_merged_and_visible_to_later_phases() -> None:
    @depends_on("screenshot")
    class Reader(BaseProcessingStrategy):
        async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
            return ProcessingResult(success=True, data={"seen": context.get("screenshot")})

    @provides("screenshot")
    class Writer(BaseProcessingStrategy):
        async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
            return ProcessingResult(success=True, data={"screenshot": "s.png"})

    proc = make_processor({P.DATA_COLLECTION: Writer(), P.LLM_INTERACTION: Reader()})
    result = await proc.process()
    assert proc.processing_context.local(ToyContext).seen == "s.png"
    assert result.data == {"screenshot": "s.png", "seen": "s.png"}


def test_construction_lists_every_unmet_dependency() -> None:
    @depends_on("parsed_response")
    class NeedsParsed(Recorder):
        pass

    @depends_on("control_info", "screenshot")
    class NeedsData(Recorder):
        pass

    with pytest.raises(ProcessingException) as info:
        make_processor({P.LLM_INTERACTION: NeedsData("llm"), P.ACTION_EXECUTION: NeedsParsed("act")})
    message = str(info.value)
    for field_name in ("control_info", "screenshot", "parsed_response"):
        assert f"'{field_name}'" in message
    assert "Strategy llm (phase llm_interaction) depends on 'control_info'" in message
    assert len(info.value.context_data["errors"]) == 3


def test_dependency_provided_only_by_a_later_phase_is_an_error() -> None:
    @provides("plan")
    class Planner(Recorder):
        pass

    @depends_on("plan")
    class Collector(Recorder):
        pass

    with pytest.raises(ProcessingException, match="'plan'"):
        make_processor({P.DATA_COLLECTION: Collector("dc"), P.LLM_INTERACTION: Planner("llm")})


async def test_dependency_satisfied_only_by_global_context_is_ok() -> None:
    @depends_on("log_path", "command_dispatcher", "session_step")
    class UsesGlobals(BaseProcessingStrategy):
        async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
            return ProcessingResult(
                success=True,
                data={"got": (context.get("log_path"), context.get("command_dispatcher"))},
            )

    ctx = Context()
    ctx.set(ContextNames.LOG_PATH, "/tmp/logs")
    dispatcher = object()
    ctx.attach_command_dispatcher(dispatcher)
    proc = make_processor({P.ACTION_EXECUTION: UsesGlobals()}, context=ctx)
    await proc.process()
    assert proc.processing_context.local(ToyContext).got == ("/tmp/logs", dispatcher)


def test_missing_global_dependency_fails_at_construction() -> None:
    @depends_on("command_dispatcher")
    class NeedsDispatcher(Recorder):
        pass

    with pytest.raises(ProcessingException, match="command_dispatcher"):
        make_processor({P.ACTION_EXECUTION: NeedsDispatcher("act")})


def test_declared_external_fields_pass_construction() -> None:
    @depends_on("screenshot_url")
    class NeedsExternal(Recorder):
        pass

    class Proc(ProcessorTemplate):
        external_fields = frozenset({"screenshot_url"})

        def _setup_strategies(self) -> None:
            self.strategies[P.LLM_INTERACTION] = NeedsExternal("llm")

    Proc(Toy(), Context())  # no exception


async def test_runtime_dependency_check_names_strategy_and_fields() -> None:
    @depends_on("token")
    class NeedsToken(Recorder):
        pass

    class Proc(ProcessorTemplate):
        external_fields = frozenset({"token"})  # promised, but nobody delivers it

        def _setup_strategies(self) -> None:
            self.strategies[P.LLM_INTERACTION] = NeedsToken("llm")

    agent = Toy()
    proc = Proc(agent, Context())
    with pytest.raises(ProcessingException) as info:
        await proc.process()
    assert "llm" in str(info.value) and "token" in str(info.value)
    assert info.value.phase is P.LLM_INTERACTION
    assert agent.calls == []


async def test_runtime_dependency_resolves_from_global_set_after_construction() -> None:
    @depends_on("command_dispatcher")
    class NeedsDispatcher(Recorder):
        pass

    class Proc(ProcessorTemplate):
        external_fields = frozenset({"command_dispatcher"})

        def _setup_strategies(self) -> None:
            self.strategies[P.ACTION_EXECUTION] = NeedsDispatcher("act")

    ctx = Context()
    agent = Toy()
    proc = Proc(agent, ctx)
    ctx.attach_command_dispatcher(object())
    await proc.process()
    assert agent.calls == ["act"]


async def test_failed_fail_fast_strategy_aborts_run() -> None:
    agent = Toy()
    proc = make_processor(
        {
            P.DATA_COLLECTION: Recorder("dc", {"a": 1}),
            P.LLM_INTERACTION: Recorder("llm", {"b": 2}, fail=True),
            P.ACTION_EXECUTION: Recorder("act"),
        },
        agent=agent,
    )
    with pytest.raises(ProcessingException) as info:
        await proc.process()
    assert str(info.value) == "Strategy llm failed in phase llm_interaction: llm failed"
    assert agent.calls == ["dc", "llm"]
    assert proc.processing_context.local(ToyContext).b is None  # failed data not merged
    assert proc.processing_context.phase_results[P.LLM_INTERACTION].success is False


async def test_failed_non_fail_fast_strategy_continues_without_merging() -> None:
    agent = Toy()
    proc = make_processor(
        {
            P.ACTION_EXECUTION: Recorder("act", {"action_success": True}, fail=True, fail_fast=False),
            P.MEMORY_UPDATE: Recorder("mem", {"memory_written": True}),
        },
        agent=agent,
    )
    result = await proc.process()
    assert agent.calls == ["act", "mem"]
    assert proc.processing_context.local(ToyContext).action_success is None
    assert proc.processing_context.local(ToyContext).memory_written is True
    assert result.success is False and "act failed" in (result.error or "")
    assert proc.global_context.get(ContextNames.LAST_ACTION_SUCCESS) is None


async def test_raising_fail_fast_strategy_becomes_processing_exception() -> None:
    proc = make_processor({P.LLM_INTERACTION: Recorder("llm", boom=True)})
    with pytest.raises(ProcessingException) as info:
        await proc.process()
    assert isinstance(info.value.original_exception, RuntimeError)
    assert info.value.phase is P.LLM_INTERACTION
    assert "llm exploded" in str(info.value)


async def test_raising_non_fail_fast_strategy_does_not_abort() -> None:
    agent = Toy()
    proc = make_processor(
        {P.ACTION_EXECUTION: Recorder("act", boom=True, fail_fast=False), P.MEMORY_UPDATE: Recorder("mem")},
        agent=agent,
    )
    result = await proc.process()
    assert agent.calls == ["act", "mem"]
    assert proc.processing_context.phase_results[P.ACTION_EXECUTION].error == "act exploded"
    assert not result.success


async def test_finalize_promotes_action_success() -> None:
    proc = make_processor({P.ACTION_EXECUTION: Recorder("act", {"action_success": True})})
    await proc.process()
    assert proc.global_context.get(ContextNames.LAST_ACTION_SUCCESS) is True


async def test_local_context_is_seeded_from_global_and_agent() -> None:
    ctx = Context()
    ctx.set(ContextNames.REQUEST, "open the file")
    ctx.set(ContextNames.SESSION_STEP, 7)
    ctx.set(ContextNames.CURRENT_ROUND_ID, 2)
    ctx.current_round_step = 4
    proc = make_processor({P.SETUP: Recorder("setup")}, context=ctx)
    local = proc.processing_context.local_context
    assert (local.request, local.session_step, local.round_num, local.round_step, local.agent_step) == (
        "open the file",
        7,
        2,
        4,
        3,
    )


async def test_custom_context_class_is_used() -> None:
    from dataclasses import dataclass

    @dataclass
    class MyContext(BasicProcessorContext):
        screenshot: str = ""

    class Proc(ProcessorTemplate):
        processor_context_class = MyContext

        def _setup_strategies(self) -> None:
            self.strategies[P.DATA_COLLECTION] = Recorder("dc", {"screenshot": "x.png"})

    proc = Proc(Toy(), Context())
    result = await proc.process()
    local = proc.processing_context.local_context
    assert isinstance(local, MyContext) and result.local is local
    assert proc.processing_context.local(MyContext).screenshot == "x.png"


async def test_undeclared_fields_are_refused_at_construction_and_at_run_time() -> None:
    # A declared @provides name the context lacks stops the processor before anything runs ...
    nowhere = provides("nowhere")(type("Provider", (Recorder,), {}))
    with pytest.raises(ProcessingException, match="Strategy p provides 'nowhere', which ToyContext does not"):
        make_processor({P.DATA_COLLECTION: nowhere("p")})
    # ... and data a strategy returns for an undeclared field fails its phase.
    proc = make_processor({P.DATA_COLLECTION: Recorder("dc", {"other": 1})})
    with pytest.raises(ProcessingException, match="ToyContext declares no field 'other'"):
        await proc.process()


class Spy(ProcessorMiddleware):
    def __init__(self, name: str, log: list[str], fail_in: str | None = None) -> None:
        super().__init__(name)
        self.log = log
        self.fail_in = fail_in
        self.errors: list[Exception] = []

    async def before_process(self, processor: ProcessorTemplate, context: ProcessingContext) -> None:
        self.log.append(f"before:{self.name}")
        if self.fail_in == "before":
            raise ValueError("middleware broke")

    async def after_process(self, processor: ProcessorTemplate, result: ProcessingResult) -> None:
        self.log.append(f"after:{self.name}")

    async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
        self.log.append(f"error:{self.name}")
        self.errors.append(error)

    async def before_phase(self, processor: ProcessorTemplate, phase: ProcessingPhase, context: Any) -> None:
        self.log.append(f"phase:{self.name}:{phase.value}")


async def test_middleware_before_in_order_after_in_reverse() -> None:
    log: list[str] = []
    proc = make_processor({P.LLM_INTERACTION: Recorder("llm")}, middleware=[Spy("a", log), Spy("b", log)])
    await proc.process()
    assert log == [
        "before:a",
        "before:b",
        "phase:a:llm_interaction",
        "phase:b:llm_interaction",
        "after:b",
        "after:a",
    ]


async def test_middleware_on_error_called_on_every_middleware_then_reraised() -> None:
    log: list[str] = []
    a, b = Spy("a", log), Spy("b", log)
    proc = make_processor({P.LLM_INTERACTION: Recorder("llm", fail=True)}, middleware=[a, b])
    with pytest.raises(ProcessingException):
        await proc.process()
    assert log[-2:] == ["error:a", "error:b"]
    assert "after:a" not in log
    assert isinstance(a.errors[0], ProcessingException) and a.errors[0] is b.errors[0]


async def test_error_in_middleware_itself_reaches_on_error() -> None:
    log: list[str] = []
    agent = Toy()
    proc = make_processor(
        {P.LLM_INTERACTION: Recorder("llm")},
        middleware=[Spy("a", log), Spy("b", log, fail_in="before")],
        agent=agent,
    )
    with pytest.raises(ValueError, match="middleware broke"):
        await proc.process()
    assert agent.calls == []
    assert log == ["before:a", "before:b", "error:a", "error:b"]


async def test_composed_strategy_inside_processor() -> None:
    agent = Toy()
    composed = ComposedStrategy(
        [Recorder("shot", {"screenshot": "a.png"}), Recorder("tree", fail=True, fail_fast=False)],
        name="DC",
    )
    proc = make_processor({P.DATA_COLLECTION: composed, P.LLM_INTERACTION: Recorder("llm")}, agent=agent)
    await proc.process()
    assert agent.calls == ["shot", "tree", "llm"]
    assert proc.processing_context.local(ToyContext).screenshot == "a.png"


def test_non_strategy_registration_is_reported() -> None:
    with pytest.raises(ProcessingException, match="not a strategy"):
        make_processor({P.LLM_INTERACTION: object()})


async def test_failing_on_error_does_not_hide_the_original_error_or_skip_others() -> None:
    log: list[str] = []

    class Broken(Spy):
        async def on_error(self, processor: ProcessorTemplate, error: Exception) -> None:
            self.log.append("error:broken")
            raise RuntimeError("on_error itself failed")

    proc = make_processor(
        {P.LLM_INTERACTION: Recorder("llm", fail=True)}, middleware=[Broken("x", log), Spy("b", log)]
    )
    with pytest.raises(ProcessingException, match="Strategy llm failed"):
        await proc.process()
    assert log[-2:] == ["error:broken", "error:b"]


class Settler(BaseProcessingStrategy):
    """Decides the step's status in its result, as an action strategy does."""

    def __init__(self, status: str) -> None:
        super().__init__(name="settle", fail_fast=False)
        self.status = status

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        return ProcessingResult(success=True, status=self.status)


class StatusToy(Toy):
    """A Toy with the status the processor hands over."""

    status = "CONTINUE"


async def test_the_status_a_phase_settles_reaches_the_agent_and_the_overall_result() -> None:
    agent = StatusToy()
    seen: list[str] = []

    class Peek(Recorder):
        async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
            seen.append(agent.status)
            return await super().execute(agent, context)

    proc = make_processor({P.ACTION_EXECUTION: Settler("FINISH"), P.MEMORY_UPDATE: Peek("mem")}, agent=agent)
    result = await proc.process()
    assert seen == ["FINISH"]  # the memory phase already sees the step's status
    assert agent.status == "FINISH" and result.status == "FINISH"


async def test_a_crash_takes_the_processors_failure_status_for_that_phase() -> None:
    class Proc(ProcessorTemplate):
        failure_status = MappingProxyType({P.ACTION_EXECUTION: "FAIL"})

        def _setup_strategies(self) -> None:
            self.strategies[P.LLM_INTERACTION] = Recorder("llm", fail_fast=False, boom=True)
            self.strategies[P.ACTION_EXECUTION] = Recorder("act", fail_fast=False, boom=True)

    agent = StatusToy()
    result = await Proc(agent, Context()).process()
    assert agent.status == "FAIL" and result.status == "FAIL"

    fast = StatusToy()

    class FastProc(Proc):
        def _setup_strategies(self) -> None:
            self.strategies[P.ACTION_EXECUTION] = Recorder("act", boom=True)

    with pytest.raises(ProcessingException):
        await FastProc(fast, Context()).process()
    assert fast.status == "FAIL"


async def test_no_status_settled_leaves_the_agents_status_alone() -> None:
    agent = StatusToy()
    result = await make_processor({P.ACTION_EXECUTION: Recorder("act")}, agent=agent).process()
    assert agent.status == "CONTINUE" and result.status is None
