"""Strategies: declarations, dependency validation, handle_error and ComposedStrategy."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    ProcessingStrategy,
    StrategyDependency,
    StrategyDependencyValidator,
    depends_on,
    provides,
)

P = ProcessingPhase


@dataclass
class ToyContext(BasicProcessorContext):
    """The local fields these tests' strategies provide."""

    trace: list[str] = field(default_factory=list)
    screenshot: str | None = None
    a: int | None = None
    b: int | None = None
    x: int | None = None
    y: int | None = None
    z: int | None = None
    k: int | None = None


def make_ctx() -> ProcessingContext:
    return ProcessingContext(Context(), ToyContext())


class Step(BaseProcessingStrategy):
    """Records its run in the local context's ``trace`` list."""

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
        self.fail, self.boom = fail, boom

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        context.local(ToyContext).trace.append(self.name)
        if self.boom:
            raise RuntimeError(f"{self.name} boom")
        if self.fail:
            return ProcessingResult(success=False, error=f"{self.name} failed")
        return ProcessingResult(success=True, data=self.data)


def test_name_defaults_to_class_name_and_fail_fast_to_true() -> None:
    s = Step.__new__(Step)
    BaseProcessingStrategy.__init__(s)
    assert s.name == "Step" and s.fail_fast is True
    assert isinstance(Step("x"), ProcessingStrategy)


def test_decorators_declare_and_inherit() -> None:
    @depends_on("a", StrategyDependency("b", required=False))
    @provides("c")
    class Base(Step):
        pass

    @depends_on("d")
    @provides("e")
    class Child(Base):
        pass

    assert [d.field_name for d in Base("x").get_dependencies()] == ["a", "b"]
    assert [d.field_name for d in Child("x").get_dependencies()] == ["a", "b", "d"]
    assert Child("x").get_provides() == ["c", "e"]
    assert Step("x").get_dependencies() == [] and Step("x").get_provides() == []


def test_validate_dependencies_checks_local_then_global_and_types() -> None:
    @depends_on(
        "screenshot", StrategyDependency("request", expected_type=str), StrategyDependency("opt", False)
    )
    class S(Step):
        pass

    ctx = make_ctx()
    assert S("s").validate_dependencies(ctx) == ["screenshot"]  # request "" is a str; opt is optional
    ctx.update_local({"screenshot": "a.png"})
    assert S("s").validate_dependencies(ctx) == []
    ctx.update_local({"request": 5})
    assert S("s").validate_dependencies(ctx) == ["request (has type int, expected str)"]


def test_validate_dependencies_falls_back_to_global() -> None:
    @depends_on("tool_info")
    class S(Step):
        pass

    ctx = make_ctx()
    ctx.global_context.set(ContextNames.TOOL_INFO, {"x": 1})
    assert S("s").validate_dependencies(ctx) == []


def test_handle_error_reraises_when_fail_fast_else_returns_failure() -> None:
    ctx = make_ctx()
    err = ValueError("bad")
    with pytest.raises(ValueError, match="bad"):
        Step("s", fail_fast=True).handle_error(err, P.ACTION_EXECUTION, ctx)
    result = Step("s", fail_fast=False).handle_error(err, P.ACTION_EXECUTION, ctx)
    assert result == ProcessingResult(success=False, data={}, error="bad", phase=P.ACTION_EXECUTION)


def test_validator_walks_phases_in_order_and_composites_in_order() -> None:
    @provides("x")
    class Px(Step):
        pass

    @depends_on("x")
    class Nx(Step):
        pass

    v = StrategyDependencyValidator()
    assert v.validate_chain({P.LLM_INTERACTION: Nx("n"), P.DATA_COLLECTION: Px("p")}) == []
    assert len(v.validate_chain({P.DATA_COLLECTION: Nx("n"), P.LLM_INTERACTION: Px("p")})) == 1
    # inside a composite, order matters too
    bad = ComposedStrategy([Nx("n"), Px("p")])
    assert len(v.validate_chain({P.DATA_COLLECTION: bad})) == 1
    assert v.validate_chain({P.DATA_COLLECTION: ComposedStrategy([Px("p"), Nx("n")])}) == []
    # external names: iterable or predicate
    assert v.validate_chain([Nx("n")], external=["x"]) == []
    assert v.validate_chain([Nx("n")], external=lambda name: name == "x") == []
    assert "Strategy n depends on 'x'" in v.validate_chain([Nx("n")])[0]


def test_composed_requires_strategies() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ComposedStrategy([])


def test_composed_metadata() -> None:
    @depends_on("request", "screenshot")
    @provides("control_info")
    class Tree(Step):
        pass

    @depends_on("log_path")
    @provides("screenshot")
    class Shot(Step):
        pass

    composed = ComposedStrategy([Shot("shot"), Tree("tree")], name="DC")
    assert sorted(d.field_name for d in composed.get_dependencies()) == ["log_path", "request"]
    assert composed.get_provides() == ["screenshot", "control_info"]
    assert composed.name == "DC" and composed.execution_phase is P.DATA_COLLECTION
    assert ComposedStrategy([Shot("shot")]).name == "Composed[shot]"


async def test_composed_runs_in_order_and_updates_context_between_children() -> None:
    @depends_on("a")
    class NeedsA(Step):
        async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
            return ProcessingResult(success=True, data={"b": (context.local(ToyContext).a or 0) + 1})

    ctx = make_ctx()
    composed = ComposedStrategy([Step("first", {"a": 1}), NeedsA("second")], phase=P.LLM_INTERACTION)
    result = await composed.execute(None, ctx)
    assert result.success and result.data == {"a": 1, "b": 2}
    assert result.phase is P.LLM_INTERACTION
    assert ctx.local(ToyContext).b == 2


async def test_composed_fail_fast_returns_failure_of_fail_fast_child() -> None:
    ctx = make_ctx()
    composed = ComposedStrategy([Step("a", {"x": 1}), Step("b", fail=True), Step("c")])
    result = await composed.execute(None, ctx)
    assert not result.success and result.error == "b: b failed"
    assert ctx.local(ToyContext).trace == ["a", "b"]


async def test_composed_not_fail_fast_continues_past_failures() -> None:
    ctx = make_ctx()
    composed = ComposedStrategy(
        [Step("a", fail=True), Step("b", {"y": 2}), Step("c", boom=True)], fail_fast=False
    )
    result = await composed.execute(None, ctx)
    assert result.success and result.data == {"y": 2}
    assert ctx.local(ToyContext).trace == ["a", "b", "c"]


async def test_composed_fail_fast_skips_failures_of_non_fail_fast_children() -> None:
    # Spec C §18 #11: optional components must not abort a fail_fast composite.
    ctx = make_ctx()
    composed = ComposedStrategy(
        [
            Step("apps", fail=True, fail_fast=False),
            Step("controls", boom=True, fail_fast=False),
            Step("z", {"z": 1}),
        ],
        fail_fast=True,
    )
    result = await composed.execute(None, ctx)
    assert result.success and result.data == {"z": 1}
    assert ctx.local(ToyContext).trace == ["apps", "controls", "z"]


async def test_composed_fail_fast_reraises_fail_fast_child_exception() -> None:
    composed = ComposedStrategy([Step("a", boom=True, fail_fast=True)], fail_fast=True)
    with pytest.raises(RuntimeError, match="a boom"):
        await composed.execute(None, make_ctx())


async def test_composed_child_missing_dependency_is_a_child_failure() -> None:
    @depends_on("nowhere")
    class Needy(Step):
        pass

    result = await ComposedStrategy([Needy("n")]).execute(None, make_ctx())
    assert not result.success and "nowhere" in (result.error or "")
    result = await ComposedStrategy([Needy("n", fail_fast=False), Step("ok", {"k": 1})]).execute(
        None, make_ctx()
    )
    assert result.success and result.data == {"k": 1}
