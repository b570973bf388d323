"""The MobileAgent's guards (the contract is in ``starweave.agent.guards``), one principle each.

Asked once per step, in the action phase, about the proposed action before it runs:

* ``act``: a step that goes on must act on the screen (twice in a row without: stop);
* ``repeat``: an action that changes what the phone holds (launching an app starts it afresh,
  typing adds the text again) is not run again once it succeeded (a second such repeat in a row:
  stop). Taps, swipes, keys and waits may well be repeated on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starweave.agent.guards import ALLOW, GuardState, GuardTable, Verdict, refuse, stop

#: Actions not run again once they succeeded.
NO_REPEAT = frozenset({"launch_app", "type_text"})
ENDS = ("FINISH", "FAIL")


@dataclass
class MobileStep:
    """What the guards see of one step: the answer's status, function and call text, and the calls
    that succeeded so far (the prompt's "[Last Success Actions]")."""

    request: str
    status: str
    function: str
    call: str
    succeeded: list[str] = field(default_factory=list)

    @property
    def repeats_success(self) -> bool:
        """Whether this is a :data:`NO_REPEAT` action identical to one that already succeeded."""
        return self.function in NO_REPEAT and self.call in self.succeeded


class Act:
    """No action while going on."""

    name = "act"
    principle = "A step that goes on must act on the screen; twice in a row without, the task stops."

    async def check(self, step: MobileStep, state: GuardState) -> Verdict:
        if step.function:
            state.counts[self.name] = 0
            return ALLOW
        if step.status in ENDS:
            return ALLOW  # a FINISH or FAIL needs no action
        if state.bump(self.name) >= 2:
            return stop("Stopped: the model gave no action twice in a row.")
        return refuse("No action was given: act on the screen, or reply FINISH.")


class Repeat:
    """A launch or typing that already succeeded, proposed again."""

    name = "repeat"
    principle = "A launch or typing that succeeded is not run again: its effect is already there."

    async def check(self, step: MobileStep, state: GuardState) -> Verdict:
        if not step.repeats_success:
            if step.function:
                state.counts[self.name] = 0
            return ALLOW
        if state.bump(self.name) >= 2:
            return stop(f"Stopped: the model kept repeating {step.call}.")
        return refuse(
            f"Not run again: {step.call} already succeeded (see the last success actions). Do the "
            "next part of the request, or FINISH if every part is done."
        )


def mobile_guards(enabled: bool = True) -> GuardTable[MobileStep]:
    """The MobileAgent's table, in the order the guards are asked."""
    return GuardTable([Act(), Repeat()], enabled)
