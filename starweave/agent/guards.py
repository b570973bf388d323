"""The guard contract: rules that stand between a model's answer and its effect.

A small model repeats itself, finishes too early and states facts it never saw. A *guard* is one
rule against one such failure, stated as a general principle in one line (``Guard.principle``);
it never names a task, a command of a task or the wording of an error message.

A guard looks at one step and returns a :class:`Verdict`:

* ``allow``: nothing to say;
* ``refuse``: the step does not take effect this time, and the model reads the note. A refusal is
  once only: the model may insist (a refusal never follows a refusal), and a request gets at most
  ``GuardTable.max_refusals`` of them, so a guard costs a step or two, never a loop;
* ``stop``: the request ends as failed, with the note as the reason (for loops that would
  otherwise run to the step cap);
* ``finish``: the request ends as done, with the note as its result (for a loop over work that is
  already done and stands: going round again would change nothing).

Each agent has one :class:`GuardTable`; its processor runs it at one point of the step, the action
phase, through :meth:`GuardTable.judge` (on the proposed step before its call runs, and on a FINISH
or FAIL once its call has run), and closes the step with :meth:`GuardState.end_step`. What the
guards count lives in one :class:`GuardState` per request, never on the agent objects.
``GUARDS: off`` in ``system.yaml`` (``SystemConfig.guards``) turns every table off, so that a strong
model runs without them; the meaning of the response format (a FINISH whose own call failed did not
finish) and the safety checks are not guards and stay on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

StepT = TypeVar("StepT", contravariant=True)
TableStepT = TypeVar("TableStepT")

#: Refusals a request may receive from one table.
MAX_REFUSALS = 2


class Decision(StrEnum):
    """What a guard decides about a step."""

    ALLOW = "allow"
    REFUSE = "refuse"
    STOP = "stop"
    FINISH = "finish"


@dataclass(frozen=True)
class Verdict:
    """A guard's decision, the note the model (or, for ``stop``, the user) reads, and the name of
    the guard that decided: hints and logs read ``reason``, never the note's wording."""

    decision: Decision
    note: str = ""
    reason: str = ""

    @property
    def allowed(self) -> bool:
        """Whether the step takes effect."""
        return self.decision is Decision.ALLOW


ALLOW = Verdict(Decision.ALLOW)


def refuse(note: str) -> Verdict:
    """A refusal with ``note`` (the table fills in the guard's name)."""
    return Verdict(Decision.REFUSE, note)


def stop(note: str) -> Verdict:
    """A stop with ``note`` (the table fills in the guard's name)."""
    return Verdict(Decision.STOP, note)


def finish(note: str) -> Verdict:
    """An end as done with ``note`` as the result (the table fills in the guard's name)."""
    return Verdict(Decision.FINISH, note)


@dataclass
class GuardState:
    """What the guards remember of the current request: counts by key, refusals, and the facts
    guards share (the last call and whether it succeeded). A new request starts a fresh one."""

    request: str = ""
    counts: Counter[str] = field(default_factory=Counter)
    refusals: int = 0
    refused_last: bool = False  # the previous step was refused
    refused_now: bool = False  # this step was
    facts: dict[str, Any] = field(default_factory=dict)

    def begin(self, request: str) -> bool:
        """Start afresh when ``request`` is not the current one; whether it was new."""
        if request == self.request:
            return False
        self.request = request
        self.counts.clear()
        self.refusals = 0
        self.refused_last = self.refused_now = False
        self.facts.clear()
        return True

    def end_step(self) -> None:
        """Close the step: whether it was refused is what the next step's refusals look back at."""
        self.refused_last, self.refused_now = self.refused_now, False

    def bump(self, key: str) -> int:
        """Add one to ``key``'s count and return the new count."""
        self.counts[key] += 1
        return self.counts[key]


class Guard(Protocol[StepT]):
    """One rule: ``name`` (a short identifier, the verdict's reason), ``principle`` (one line, the
    rule in general terms) and ``check``, which may read and update the request's state."""

    name: str
    principle: str

    async def check(self, step: StepT, state: GuardState) -> Verdict:
        """The verdict on ``step``."""
        ...


@dataclass
class GuardTable(Generic[TableStepT]):
    """An agent's guards, in the order they are asked. The first verdict that is not ``allow``
    decides (``stop`` and ``finish`` always); a refusal the model may overrule (see the module
    docstring) counts as ``allow``."""

    guards: Sequence[Guard[TableStepT]]
    enabled: bool = True
    max_refusals: int = MAX_REFUSALS

    def principles(self) -> list[str]:
        """Every guard's rule, one line each (for documentation and ``starweave doctor``)."""
        return [f"{g.name}: {g.principle}" for g in self.guards]

    async def judge(self, step: TableStepT, state: GuardState) -> Verdict:
        """Ask every guard about ``step`` in turn; the verdict that applies."""
        if not self.enabled:
            return ALLOW
        for guard in self.guards:
            verdict = await guard.check(step, state)
            if verdict.decision is Decision.ALLOW:
                continue
            verdict = Verdict(verdict.decision, verdict.note, guard.name)
            if verdict.decision is not Decision.REFUSE:
                return verdict  # stop or finish: final
            if state.refused_last or state.refusals >= self.max_refusals:
                continue  # the model insists, or has been refused enough for this request
            state.refusals += 1
            state.refused_now = True
            return verdict
        return ALLOW
