"""The HostAgent's guards (the contract is in ``starweave.agent.guards``), one principle each.

Asked once per step, in the action phase, about the step as it would take effect (a subtask
about to be handed over once its target is selected, or a FINISH before anything else runs):

* ``repeat``: a subtask a target has finished is not given to it again; insisted on, the request
  ends with what it did (done, when it took effect; failed, when it changed nothing);
* ``retry``: a subtask that failed twice on a target is not given to it a third time (stop);
* ``backed``: a FINISH needs work behind it: a finished subtask, a host tool that ran, or an answer
  of the user.

The pure parts (which subtasks are the same, what backs a FINISH) are in ``repeats.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agent.guards import ALLOW, GuardState, GuardTable, Verdict, finish, refuse, stop
from starweave.agents.app.agent import SubtaskOutcome
from starweave.agents.host.repeats import (
    CONTINUE,
    FINISH,
    done_verdict,
    finished_before,
    retry_verdict,
    same_subtask,
    unbacked_finish,
)

ASSIGN = "ASSIGN"
#: The GuardState fact: per target, the subtasks refused once as repeats.
WARNED = "warned"

UNBACKED_FINISH_NOTE = (
    "FINISH refused: no subtask has been done in this request yet, so nothing shows the result. "
    "Assign the work to a target with select_application_window first (FINISH again only if the "
    "request needs no application)."
)


@dataclass
class HostStep:
    """What the guards see of one HostAgent step.

    ``status`` is the step's status as it would take effect (ASSIGN once a target is selected for a
    subtask); ``target`` and ``earlier`` are the selected target's name and its earlier subtasks;
    ``records`` the round's subtask records, ``host_actions`` the host's own earlier tool calls and
    ``answers`` how many questions the user answered."""

    request: str
    status: str
    function: str = ""
    subtask: str = ""
    target: str = ""
    earlier: list[SubtaskOutcome] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    host_actions: list[dict[str, Any]] = field(default_factory=list)
    answers: int = 0

    @property
    def assigning(self) -> bool:
        """Whether this step hands a subtask over to a target."""
        return self.status == ASSIGN and bool(self.target)


def _warned(state: GuardState) -> dict[str, list[str]]:
    warned: dict[str, list[str]] = state.facts.setdefault(WARNED, {})
    return warned


class Repeat:
    """A subtask handed again to the target that finished it."""

    name = "repeat"
    principle = (
        "A subtask a target has finished is not given to it again; insisted on, the request ends "
        "with what it did."
    )

    async def check(self, step: HostStep, state: GuardState) -> Verdict:
        if not step.assigning:
            return ALLOW
        last = finished_before(step.earlier, step.subtask)
        if last is None:
            return ALLOW
        told = _warned(state).setdefault(step.target, [])
        warned = any(same_subtask(step.subtask, w) for w in told)
        verdict = done_verdict(last, step.subtask, step.target, warned)
        if verdict.status == CONTINUE:
            told.append(step.subtask)
            return refuse(verdict.result)
        return finish(verdict.result) if verdict.status == FINISH else stop(verdict.result)


class Retry:
    """A subtask that keeps failing on one target."""

    name = "retry"
    principle = "A subtask that failed twice on a target is not given to it a third time."

    async def check(self, step: HostStep, state: GuardState) -> Verdict:
        if not step.assigning:
            return ALLOW
        verdict = retry_verdict(step.earlier, step.subtask, step.target)
        return ALLOW if verdict is None else stop(verdict.result)


class Backed:
    """A FINISH with nothing done."""

    name = "backed"
    principle = (
        "A FINISH needs work behind it: a finished subtask, a host tool that ran, or the user's answer."
    )

    async def check(self, step: HostStep, state: GuardState) -> Verdict:
        if step.status != FINISH or not unbacked_finish(step.records, step.host_actions, step.answers):
            return ALLOW
        return refuse(UNBACKED_FINISH_NOTE)


def host_guards(enabled: bool = True) -> GuardTable[HostStep]:
    """The HostAgent's table, in the order the guards are asked."""
    return GuardTable([Repeat(), Retry(), Backed()], enabled)
