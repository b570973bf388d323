"""What the HostAgent's guards (``guards.py``) read of the round: which earlier subtasks a new one
repeats, and whether anything backs a FINISH. Plain functions over the subtasks' outcomes and the
host's own actions; the rules that use them, and their notes, are the guards.

A small model, shown that a subtask finished, may assign the same subtask to the same target again,
and again: each time the AppAgent "finishes" it, nothing changes, and the round only ends at the
step limit. So before a subtask is handed over it is compared with the target's earlier subtasks
(:func:`repeat_verdict`):

- it finished before: it is not assigned, and the HostAgent is told so (the request may need more);
  assigned yet again, the request ends: with FINISH and that result when the subtask had done
  something (an action took effect, or its result was checked against the window), else with FAIL
  naming the cause (it "finished" without any effect);
- it failed :data:`MAX_ATTEMPTS` times already: the request ends with FAIL and the last reason;
- otherwise (new, or failed once) it is assigned.

A FINISH of the whole request with nothing behind it (no subtask finished, no host tool ran, no
question answered) is :func:`unbacked_finish`: a small model tends to answer from the request alone
("12 + 30 = 42") without doing anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starweave.agents.app.agent import SubtaskOutcome

#: Failed attempts of one subtask on one target before the request is given up.
MAX_ATTEMPTS = 2
#: Word overlap (Jaccard) from which two subtasks count as the same.
SAME_SUBTASK = 0.8
_WORD = re.compile(r"[\w+\-*/=.]+")
CONTINUE, FINISH, FAIL = "CONTINUE", "FINISH", "FAIL"


@dataclass(frozen=True)
class RepeatVerdict:
    """Instead of the assignment: ``status`` CONTINUE (refused, with ``result`` as the note), or
    FINISH / FAIL (the round ends, with ``result`` as its result)."""

    status: str
    result: str


def _words(text: str) -> set[str]:
    return {w.strip(".").casefold() for w in _WORD.findall(text) if w.strip(".")}


def same_subtask(a: str, b: str) -> bool:
    """Whether two subtask texts ask for the same thing (equal, or nearly the same words)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return a.strip().casefold() == b.strip().casefold()
    return len(wa & wb) / len(wa | wb) >= SAME_SUBTASK


def finished_before(earlier: Iterable[SubtaskOutcome], subtask: str) -> SubtaskOutcome | None:
    """The last earlier run of ``subtask`` that finished (None: it never finished)."""
    finished = [o for o in earlier if o.status == FINISH and same_subtask(o.subtask, subtask)]
    return finished[-1] if finished else None


def done_verdict(last: SubtaskOutcome, subtask: str, target: str, warned: bool) -> RepeatVerdict:
    """``subtask`` finished on ``target`` already (as ``last``): refused with a note the first time;
    once ``warned``, the round ends with what it did (FINISH when it had an effect, else FAIL)."""
    if not warned:
        return RepeatVerdict(
            CONTINUE,
            f"Not assigned: the subtask {subtask!r} is done already on {target} (result "
            f"{last.result!r}). Give the next subtask, or FINISH if that completes the request.",
        )
    if last.acted or last.verified:
        return RepeatVerdict(
            FINISH,
            f"{last.result or 'Done.'} (the subtask {subtask!r} was already done on {target}; "
            "it was not assigned again)",
        )
    return RepeatVerdict(
        FAIL,
        f"The subtask {subtask!r} 'finished' on {target} without any action taking effect "
        f"(result {last.result!r}), and was assigned again: stopped instead of repeating it.",
    )


def failed_attempts(earlier: Iterable[SubtaskOutcome], subtask: str) -> list[SubtaskOutcome]:
    """The earlier runs of ``subtask`` (none of which finished, or :func:`finished_before` applies)."""
    return [o for o in earlier if same_subtask(o.subtask, subtask) and o.status != FINISH]


def retry_verdict(earlier: Iterable[SubtaskOutcome], subtask: str, target: str) -> RepeatVerdict | None:
    """FAIL when ``subtask`` failed :data:`MAX_ATTEMPTS` times on ``target`` already, else None."""
    failed = failed_attempts(earlier, subtask)
    if len(failed) < MAX_ATTEMPTS:
        return None
    return RepeatVerdict(
        FAIL,
        f"The subtask {subtask!r} failed {len(failed)} times on {target}: "
        f"{failed[-1].result or 'no reason given'}",
    )


def repeat_verdict(
    earlier: Iterable[SubtaskOutcome], subtask: str, target: str, warned: bool = False
) -> RepeatVerdict | None:
    """What to do instead of assigning ``subtask`` to ``target`` again (None: assign it): the
    ``repeat`` guard's verdict when it finished before, else the ``retry`` guard's."""
    earlier = list(earlier)
    last = finished_before(earlier, subtask)
    if last is not None:
        return done_verdict(last, subtask, target, warned)
    return retry_verdict(earlier, subtask, target)


def third_party_outcomes(records: Iterable[dict[str, Any]], agent_name: str) -> list[SubtaskOutcome]:
    """A third-party agent's earlier subtasks from the round's records (it reports no effects: a
    FINISH counts as having done something)."""
    return [
        SubtaskOutcome(
            str(r.get("subtask") or ""), str(r.get("status") or ""), str(r.get("result") or ""), True, False
        )
        for r in records
        if r.get("agent_name") == agent_name
    ]


def unbacked_finish(
    records: Iterable[dict[str, Any]], host_actions: Iterable[dict[str, Any]], answers: int
) -> bool:
    """True when nothing backs a FINISH of the request: no subtask finished, no tool of the host's own
    (launching or closing an application) succeeded, and the user answered no question."""
    if answers or any(r.get("status") == FINISH for r in records):
        return False
    return not any(
        a.get("function") not in ("", "select_application_window")
        and str((a.get("result") or {}).get("status")) == "success"
        for a in host_actions
    )
