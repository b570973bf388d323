"""Declared data flow between strategies: ``@depends_on``, ``@provides`` and the chain validator."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from starweave.agent.processing import PHASE_ORDER, ProcessingPhase

T = TypeVar("T", bound=type)


@dataclass(frozen=True)
class StrategyDependency:
    """One input a strategy needs: looked up in the local context, then in the global one."""

    field_name: str
    required: bool = True
    expected_type: type | None = None
    description: str = ""


def _as_dependency(item: str | StrategyDependency) -> StrategyDependency:
    return item if isinstance(item, StrategyDependency) else StrategyDependency(item)


def depends_on(*fields: str | StrategyDependency) -> Callable[[T], T]:
    """Class decorator: the strategy needs ``fields`` (adds to what its base classes need)."""
    deps = [_as_dependency(f) for f in fields]

    def decorate(cls: T) -> T:
        inherited: tuple[StrategyDependency, ...] = getattr(cls, "_declared_dependencies", ())
        known = {d.field_name for d in inherited}
        cls._declared_dependencies = inherited + tuple(d for d in deps if d.field_name not in known)  # type: ignore[attr-defined]
        return cls

    return decorate


def provides(*fields: str) -> Callable[[T], T]:
    """Class decorator: the strategy's successful result contains ``fields``."""

    def decorate(cls: T) -> T:
        inherited: tuple[str, ...] = getattr(cls, "_declared_provides", ())
        cls._declared_provides = inherited + tuple(f for f in fields if f not in inherited)  # type: ignore[attr-defined]
        return cls

    return decorate


def _dependencies_of(strategy: Any) -> list[StrategyDependency]:
    getter = getattr(strategy, "get_dependencies", None)
    return list(getter()) if callable(getter) else []


def _provides_of(strategy: Any) -> list[str]:
    getter = getattr(strategy, "get_provides", None)
    return list(getter()) if callable(getter) else []


def _children_of(strategy: Any) -> list[Any] | None:
    # A composite exposes its components; validate them one by one, in order.
    children = getattr(strategy, "strategies", None)
    return list(children) if isinstance(children, list) else None


def _leaves(strategy: Any) -> list[Any]:
    children = _children_of(strategy)
    if children is None:
        return [strategy]
    return [leaf for child in children for leaf in _leaves(child)]


class StrategyDependencyValidator:
    """Checks, before anything runs, that every required input of every strategy has a source."""

    def validate_chain(
        self,
        strategies: Mapping[ProcessingPhase, Any] | Sequence[Any],
        external: Iterable[str] | Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Return one message per unmet dependency (empty when the chain is sound).

        A dependency is met when an earlier strategy (an earlier phase, or an earlier component
        of the same composite) provides it, or when ``external`` says it comes from outside
        (the global context or a declared external field).
        """
        is_external = self._external_predicate(external)
        ordered: list[tuple[ProcessingPhase | None, Any]]
        if isinstance(strategies, Mapping):
            ordered = [(phase, strategies[phase]) for phase in PHASE_ORDER if phase in strategies]
        else:
            ordered = [(None, s) for s in strategies]
        provided: set[str] = set()
        errors: list[str] = []
        for phase, strategy in ordered:
            self._check(strategy, phase, provided, is_external, errors)
        return errors

    @staticmethod
    def _external_predicate(external: Iterable[str] | Callable[[str], bool] | None) -> Callable[[str], bool]:
        if external is None:
            return lambda _name: False
        if callable(external):
            return external
        names = frozenset(external)
        return names.__contains__

    def _check(
        self,
        strategy: Any,
        phase: ProcessingPhase | None,
        provided: set[str],
        is_external: Callable[[str], bool],
        errors: list[str],
    ) -> None:
        children = _children_of(strategy)
        if children is not None:
            for child in children:
                self._check(child, phase, provided, is_external, errors)
            provided.update(_provides_of(strategy))
            return
        name = getattr(strategy, "name", type(strategy).__name__)
        where = f" (phase {phase.value})" if phase is not None else ""
        for dep in _dependencies_of(strategy):
            if not dep.required or dep.field_name in provided or is_external(dep.field_name):
                continue
            errors.append(
                f"Strategy {name}{where} depends on '{dep.field_name}', which no earlier strategy "
                f"provides and which is not in the global context; add a strategy that "
                f"@provides('{dep.field_name}') in an earlier phase, set it in the global context, "
                f"or list it in the processor's external_fields"
            )
        provided.update(_provides_of(strategy))

    def validate_declared(
        self,
        strategies: Iterable[Any],
        fields: frozenset[str],
        context_name: str,
    ) -> list[str]:
        """Return one message per ``@provides`` name that is not a declared field of the local
        context. (A ``@depends_on`` name is then a declared field or external: :meth:`validate_chain`
        already refuses one that no earlier strategy provides and that does not come from outside.)"""
        errors: list[str] = []
        for strategy in (leaf for s in strategies for leaf in _leaves(s)):
            name = getattr(strategy, "name", type(strategy).__name__)
            for provided in _provides_of(strategy):
                if provided not in fields:
                    errors.append(
                        f"Strategy {name} provides '{provided}', which {context_name} does not declare; "
                        f"add the field to the processor's processor_context_class"
                    )
        return errors
