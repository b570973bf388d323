"""Level-2 building blocks: processing strategies and their composition.

A strategy does one job in one phase and returns a :class:`ProcessingResult`. ``fail_fast``
works at two levels (spec C §19 #1):

* strategy level: :meth:`BaseProcessingStrategy.handle_error` re-raises when ``fail_fast`` is
  set and otherwise returns a failed result;
* processor level: a failed result aborts the run only if the strategy is ``fail_fast``.

A :class:`ComposedStrategy` stops at a failed component only when both the component and the
composite are ``fail_fast``; failures of non-fail-fast components are logged and skipped.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from starweave.agent.processing import ProcessingContext, ProcessingPhase, ProcessingResult
from starweave.agent.strategy_dependency import (
    StrategyDependency,
    StrategyDependencyValidator,
    depends_on,
    provides,
)
from starweave.errors import InvalidArgumentError

__all__ = [
    "BaseProcessingStrategy",
    "ComposedStrategy",
    "ProcessingStrategy",
    "StrategyDependency",
    "StrategyDependencyValidator",
    "depends_on",
    "provides",
    "run_isolated",
]


@runtime_checkable
class ProcessingStrategy(Protocol):
    """What a processor needs from a strategy."""

    name: str
    fail_fast: bool

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        """Do the work for ``agent`` (a BasicAgent; typed Any so subclasses may narrow it)."""
        ...

    def get_dependencies(self) -> list[StrategyDependency]:
        """The inputs this strategy needs."""
        ...

    def get_provides(self) -> list[str]:
        """The keys a successful result contains."""
        ...

    def validate_dependencies(self, context: ProcessingContext) -> list[str]:
        """The required inputs missing (or mistyped) in ``context``."""
        ...


async def run_isolated(
    strategy: ProcessingStrategy, agent: Any, context: ProcessingContext, phase: ProcessingPhase | None
) -> tuple[ProcessingResult, Exception | None]:
    """Run ``strategy``; a crash becomes a failed result, returned with the exception.

    The one place a strategy's crash is caught: the caller (the processor, a composite) applies
    its ``fail_fast`` rule to the exception (re-raise it) or goes on with the failed result.
    """
    try:
        return await strategy.execute(agent, context), None
    except Exception as exc:
        return ProcessingResult(success=False, error=str(exc), phase=phase), exc


class BaseProcessingStrategy(ABC):
    """Base class of strategies; declare data flow with ``@depends_on`` / ``@provides``.

    Strategies must not keep per-run data on ``self``: one instance may serve many runs. They
    let exceptions propagate (the processor logs them and applies ``fail_fast``) and return the
    status they settle in :attr:`ProcessingResult.status` instead of writing ``agent.status``.
    """

    _declared_dependencies: ClassVar[tuple[StrategyDependency, ...]] = ()
    _declared_provides: ClassVar[tuple[str, ...]] = ()
    #: The name of instances created without one (default: the class name).
    strategy_name: ClassVar[str] = ""
    #: ``fail_fast`` of instances created without it: a phase that must not fail silently.
    default_fail_fast: ClassVar[bool] = True

    def __init__(self, name: str | None = None, fail_fast: bool | None = None) -> None:
        self.name = name or self.strategy_name or type(self).__name__
        self.fail_fast = self.default_fail_fast if fail_fast is None else fail_fast
        self.logger = logging.getLogger(f"Strategy.{self.name}")

    @abstractmethod
    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        """Do the work; return a result whose ``data`` holds what :meth:`get_provides` names."""

    def get_dependencies(self) -> list[StrategyDependency]:
        """The inputs this strategy needs (from ``@depends_on`` unless overridden)."""
        return list(self._declared_dependencies)

    def get_provides(self) -> list[str]:
        """The keys a successful result contains (from ``@provides`` unless overridden)."""
        return list(self._declared_provides)

    def validate_dependencies(self, context: ProcessingContext) -> list[str]:
        """Return the required inputs that are missing (local, then global) or of the wrong type."""
        problems: list[str] = []
        for dep in self.get_dependencies():
            if not dep.required:
                continue
            value = context.get(dep.field_name)
            if value is None:
                problems.append(dep.field_name)
            elif dep.expected_type is not None and not isinstance(value, dep.expected_type):
                problems.append(
                    f"{dep.field_name} (has type {type(value).__name__}, "
                    f"expected {dep.expected_type.__name__})"
                )
        return problems

    def handle_error(
        self, error: Exception, phase: ProcessingPhase | None, context: ProcessingContext
    ) -> ProcessingResult:
        """Log ``error``; re-raise it if ``fail_fast``, else return a failed result."""
        # The processor and the agent's state report the failure to the user; the traceback is
        # for debugging only.
        self.logger.warning("Strategy %s failed: %s", self.name, error)
        self.logger.debug("Traceback of %s", self.name, exc_info=error)
        if self.fail_fast:
            raise error
        return ProcessingResult(success=False, data={}, error=str(error), phase=phase)


class ComposedStrategy(BaseProcessingStrategy):
    """Runs several strategies in order within one phase and merges their outputs.

    Each component's successful data is written to the local context at once, so the next
    component sees it. A component failure ends the composite (returning that failure, or
    re-raising its exception) only if both the component and the composite are ``fail_fast``;
    otherwise it is logged and skipped.
    """

    def __init__(
        self,
        strategies: Sequence[ProcessingStrategy],
        name: str = "",
        fail_fast: bool = True,
        phase: ProcessingPhase = ProcessingPhase.DATA_COLLECTION,
    ) -> None:
        if not strategies:
            raise InvalidArgumentError("ComposedStrategy needs at least one strategy; got an empty list")
        self.strategies: list[ProcessingStrategy] = list(strategies)
        self.execution_phase = phase
        super().__init__(name or "Composed[" + "+".join(s.name for s in self.strategies) + "]", fail_fast)

    def get_dependencies(self) -> list[StrategyDependency]:
        """Union of the components' inputs, minus those an earlier component provides."""
        provided: set[str] = set()
        seen: set[str] = set()
        deps: list[StrategyDependency] = []
        for child in self.strategies:
            for dep in child.get_dependencies():
                if dep.field_name not in provided and dep.field_name not in seen:
                    seen.add(dep.field_name)
                    deps.append(dep)
            provided.update(child.get_provides())
        return deps

    def get_provides(self) -> list[str]:
        """Union of the components' outputs, in order."""
        out: list[str] = []
        for child in self.strategies:
            out.extend(p for p in child.get_provides() if p not in out)
        return out

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        """Run the components in order; see the class docstring for failure handling."""
        start = time.perf_counter()
        combined: dict[str, Any] = {}
        for child in self.strategies:
            result = await self._run_child(child, agent, context)
            if result.success:
                context.update_local(result.data)
                combined.update(result.data)
                continue
            if child.fail_fast and self.fail_fast:
                return ProcessingResult(
                    success=False,
                    data=combined,
                    error=f"{child.name}: {result.error}",
                    phase=self.execution_phase,
                    execution_time=time.perf_counter() - start,
                )
            self.logger.warning("Component %s failed (%s); continuing", child.name, result.error)
        return ProcessingResult(
            success=True,
            data=combined,
            phase=self.execution_phase,
            execution_time=time.perf_counter() - start,
        )

    async def _run_child(
        self, child: ProcessingStrategy, agent: Any, context: ProcessingContext
    ) -> ProcessingResult:
        missing = child.validate_dependencies(context)
        if missing:
            return ProcessingResult(
                success=False,
                error=f"missing required dependencies: {missing}",
                phase=self.execution_phase,
            )
        result, crash = await run_isolated(child, agent, context, self.execution_phase)
        if crash is not None:
            if child.fail_fast and self.fail_fast:
                raise crash
            # Isolation is the point of a non-fail-fast component: its crash is a failed result.
            self.logger.warning("Component %s raised %r; continuing", child.name, crash, exc_info=crash)
        return result
