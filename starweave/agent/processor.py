"""The processor: runs one step of an agent as a fixed sequence of phase strategies.

Subclasses fill :attr:`ProcessorTemplate.strategies` in :meth:`_setup_strategies` and, if they
like, :attr:`middleware_chain` in :meth:`_setup_middleware`. The template validates the
declared data flow at construction and again before each strategy runs, applies middleware,
merges successful outputs into the local context and applies the two-level ``fail_fast`` rule.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from starweave.agent.context import Context, ContextNames
from starweave.agent.middleware import ProcessorMiddleware
from starweave.agent.processing import (
    PHASE_ORDER,
    BasicProcessorContext,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
)
from starweave.agent.strategy import ProcessingStrategy, run_isolated
from starweave.agent.strategy_dependency import StrategyDependencyValidator
from starweave.errors import ProcessingException

if TYPE_CHECKING:
    from starweave.agent.basic import BasicAgent

#: Local fields the template copies from the global context (and the agent) before a run.
SEEDED_FIELDS: frozenset[str] = frozenset(
    {"session_step", "round_step", "round_num", "agent_step", "request", "subtask"}
)


#: A processor's strategy table: phase → a factory of the phase's strategy.
PhaseStrategies = Mapping[ProcessingPhase, Callable[[], ProcessingStrategy]]


class ProcessorTemplate:
    """Template method for one agent step: SETUP → DATA_COLLECTION → LLM_INTERACTION →
    ACTION_EXECUTION → MEMORY_UPDATE → CLEANUP; phases without a strategy are skipped.

    Build a new processor for every step: ``processor_cls(agent, global_context)``.
    """

    #: The local context type; subclasses may use their own BasicProcessorContext subclass.
    processor_context_class: ClassVar[type[BasicProcessorContext]] = BasicProcessorContext
    #: Dependencies the processor guarantees from outside the chain (besides the global context).
    external_fields: ClassVar[frozenset[str]] = frozenset()
    #: The status a step takes when the strategy of a phase raises (e.g. the action phase's crash
    #: makes the step ``FAIL`` or ``ERROR``); phases not listed leave the status alone.
    failure_status: ClassVar[Mapping[ProcessingPhase, str]] = MappingProxyType({})
    #: The strategy of each phase, as a factory (usually the strategy class, whose defaults give
    #: its name and ``fail_fast``); the default :meth:`_setup_strategies` builds them.
    phase_strategies: ClassVar[PhaseStrategies] = MappingProxyType({})

    def __init__(self, agent: BasicAgent, global_context: Context) -> None:
        self.agent = agent
        self.global_context = global_context
        self.strategies: dict[ProcessingPhase, ProcessingStrategy] = {}
        self.middleware_chain: list[ProcessorMiddleware] = []
        self.logger = logging.getLogger(type(self).__name__)
        self.dependency_validator = StrategyDependencyValidator()
        self._setup_strategies()
        self._setup_middleware()
        self.processing_context = self._create_processing_context()
        self._validate_strategy_chain()

    # -- configuration hooks --------------------------------------------------------------
    def _setup_strategies(self) -> None:
        """Fill ``self.strategies`` (phase → strategy); the default builds :attr:`phase_strategies`."""
        self.strategies.update({phase: make() for phase, make in self.phase_strategies.items()})

    def _setup_middleware(self) -> None:
        """Fill ``self.middleware_chain``; the default is no middleware."""
        return None

    def _seed_values(self) -> dict[str, Any]:
        """Values copied into the local context before the run (the shared step fields)."""
        g = self.global_context
        return {
            "session_step": g.get(ContextNames.SESSION_STEP),
            "round_step": g.current_round_step,
            "round_num": g.get(ContextNames.CURRENT_ROUND_ID),
            "agent_step": getattr(self.agent, "step", 0),
            "request": g.get(ContextNames.REQUEST),
            "subtask": g.get(ContextNames.SUBTASK),
        }

    def _create_processing_context(self) -> ProcessingContext:
        local = self.processor_context_class()
        ctx = ProcessingContext(global_context=self.global_context, local_context=local)
        ctx.update_local(self._seed_values())
        return ctx

    def _is_external(self, name: str) -> bool:
        """True when ``name`` comes from outside the strategy chain."""
        if name in SEEDED_FIELDS or name in self.external_fields:
            return True
        return self.processing_context.get_global(name) is not None

    def _validate_strategy_chain(self) -> None:
        """Raise ProcessingException listing every problem of the configured chain."""
        problems: list[str] = []
        valid: dict[ProcessingPhase, ProcessingStrategy] = {}
        for phase, strategy in self.strategies.items():
            if not isinstance(phase, ProcessingPhase):
                problems.append(f"{phase!r} is not a ProcessingPhase; key strategies by ProcessingPhase")
            elif not isinstance(strategy, ProcessingStrategy):
                problems.append(
                    f"{strategy!r} registered for phase {phase.value} is not a strategy "
                    f"(subclass BaseProcessingStrategy)"
                )
            else:
                valid[phase] = strategy
        problems.extend(self.dependency_validator.validate_chain(valid, external=self._is_external))
        context_class = self.processor_context_class
        problems.extend(
            self.dependency_validator.validate_declared(
                valid.values(), context_class.field_names(), context_class.__name__
            )
        )
        if problems:
            header = f"Strategy chain validation failed for {type(self).__name__}:"
            message = header + "\n- " + "\n- ".join(problems)
            self.logger.error(message)
            raise ProcessingException(message, context_data={"errors": problems})

    # -- the run --------------------------------------------------------------------------
    async def process(self) -> ProcessingResult:
        """Run every registered phase in order and return the run's overall result.

        Raises ProcessingException when a fail_fast strategy fails or a dependency is
        missing; every middleware's ``on_error`` sees the error before it propagates.
        """
        ctx = self.processing_context
        start = time.perf_counter()
        merged: dict[str, Any] = {}
        failures: list[str] = []
        last_phase: ProcessingPhase | None = None
        status: str | None = None
        self.logger.info("Starting processor %s", type(self).__name__)
        try:
            for middleware in self.middleware_chain:
                await middleware.before_process(self, ctx)
            for phase in PHASE_ORDER:
                strategy = self.strategies.get(phase)
                if strategy is None:
                    self.logger.debug("No strategy for phase %s, skipping", phase.value)
                    continue
                result = await self._run_phase(phase, strategy)
                last_phase = phase
                status = result.status or status
                if result.success:
                    merged.update(result.data)
                else:
                    failures.append(f"{strategy.name} ({phase.value}): {result.error}")
            self._finalize_processing_context()
            overall = ProcessingResult(
                success=not failures,
                data=merged,
                error="; ".join(failures) or None,
                phase=last_phase,
                execution_time=time.perf_counter() - start,
                status=status,
                local=ctx.local_context,
            )
            for middleware in reversed(self.middleware_chain):
                await middleware.after_process(self, overall)
        except Exception as exc:
            self.logger.error("Processor %s failed: %s", type(self).__name__, exc)
            await self._notify_error(exc)
            raise
        return overall

    async def _run_phase(self, phase: ProcessingPhase, strategy: ProcessingStrategy) -> ProcessingResult:
        ctx = self.processing_context
        missing = strategy.validate_dependencies(ctx)
        if missing:
            raise ProcessingException(
                f"Strategy {strategy.name} in phase {phase.value} is missing required dependencies: "
                f"{', '.join(missing)}; an earlier phase must provide them or the global context hold them",
                phase=phase,
                context_data={"strategy": strategy.name, "missing": missing},
            )
        for middleware in self.middleware_chain:
            await middleware.before_phase(self, phase, ctx)
        self.logger.info("Executing phase %s with strategy %s", phase.value, strategy.name)
        start = time.perf_counter()
        result, crash = await run_isolated(strategy, self.agent, ctx, phase)
        if crash is not None:
            # A strategy's crash: log it, settle the step's status, then abort the run (fail_fast)
            # or go on with the failed result.
            self.logger.debug("Traceback of %s", strategy.name, exc_info=crash)
            if strategy.fail_fast:
                self._apply_status(self.failure_status.get(phase))
                if isinstance(crash, ProcessingException):
                    if crash.phase is None:
                        crash.phase = phase
                    raise crash
                raise ProcessingException(
                    f"Strategy {strategy.name} failed in phase {phase.value}: {crash}",
                    phase=phase,
                    context_data={"strategy": strategy.name},
                    original_exception=crash,
                ) from crash
            self.logger.warning("Strategy %s raised %r; not fail_fast, continuing", strategy.name, crash)
            result = dataclasses.replace(result, status=self.failure_status.get(phase))
        elapsed = time.perf_counter() - start
        result = dataclasses.replace(
            result, phase=result.phase or phase, execution_time=result.execution_time or elapsed
        )
        ctx.phase_results[phase] = result
        # The next phases (memory) and the middleware see the status the step settled.
        self._apply_status(result.status)
        if result.success:
            ctx.update_local(result.data)
        else:
            self.logger.error("Strategy %s failed: %s", strategy.name, result.error)
            if strategy.fail_fast:
                raise ProcessingException(
                    f"Strategy {strategy.name} failed in phase {phase.value}: {result.error}",
                    phase=phase,
                    context_data={"strategy": strategy.name, "error": result.error},
                )
            self.logger.warning("Continuing despite the failure of %s", strategy.name)
        for middleware in reversed(self.middleware_chain):
            await middleware.after_phase(self, phase, result)
        return result

    def _apply_status(self, status: str | None) -> None:
        """Hand the status a phase settled to the agent, whose state machine reads it next."""
        if status is not None:
            self.agent.status = status

    async def _notify_error(self, error: Exception) -> None:
        for middleware in self.middleware_chain:
            try:
                await middleware.on_error(self, error)
            except Exception:
                # The original error matters more; record this one and tell the others.
                self.logger.exception("Middleware %s failed in on_error", middleware.name)

    def _finalize_processing_context(self) -> None:
        """Promote local results to the global context; default: ``action_success``."""
        action_success = self.processing_context.local_context.action_success
        if action_success is not None:
            self.global_context.set(ContextNames.LAST_ACTION_SUCCESS, action_success)
