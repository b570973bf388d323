"""The HostAgent's guards against going round in circles.

A small model, shown that a subtask finished, may assign the same subtask to the same target again,
and again: each time the AppAgent "finishes" it, nothing changes, and the round only ends at the
step limit. So before a subtask is handed over, it is compared with the earlier subtasks of that
target (:func:`repeat_verdict`):

- it finished before: it is not assigned, and the HostAgent is told so (the request may need more);
  assigned yet again, the request ends: with FINISH and that result when the subtask had done
  something (an action took effect, or its result was checked against the window), else with FAIL
  naming the cause (it "finished" without any effect);
- it failed :data:`MAX_ATTEMPTS` times already: the request ends with FAIL and the last reason;
- otherwise (new, or failed once) it is assigned.

A FINISH of the whole request with nothing behind it (no subtask finished, no host tool ran, no
question answered) is refused once (:func:`unbacked_finish`): a small model tends to answer from the
request alone ("12 + 30 = 42") without doing anything. So is, once, a FINISH while a file or a
quoted text the request names appears in no finished subtask (:func:`uncovered`): the model stops
after the first of two applications.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starweave.agents.app.agent import SubtaskOutcome
from starweave.agents.app.controls import canonical_name
from starweave.agents.app.verify import claim_of, file_names
from starweave.agents.common import own_request

#: Failed attempts of one subtask on one target before the request is given up.
MAX_ATTEMPTS = 2
#: Word overlap (Jaccard) from which two subtasks count as the same.
SAME_SUBTASK = 0.8
_WORD = re.compile(r"[\w+\-*/=.]+")


@dataclass(frozen=True)
class Verdict:
    """The round ends instead of the assignment: ``status`` (FINISH or FAIL) and the round's result."""

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


def repeat_verdict(
    earlier: Iterable[SubtaskOutcome], subtask: str, target: str, warned: bool = False
) -> Verdict | None:
    """What to do instead of assigning ``subtask`` to ``target`` again (None: assign it).

    A subtask that finished before is refused once with a note (status CONTINUE: the request may
    have more to do); assigned again after that (``warned``), it ends the round.
    """
    same = [o for o in earlier if same_subtask(o.subtask, subtask)]
    if not same:
        return None
    finished = [o for o in same if o.status == "FINISH"]
    if finished:
        last = finished[-1]
        if not warned:
            return Verdict(
                "CONTINUE",
                f"Not assigned: the subtask {subtask!r} is done already on {target} (result "
                f"{last.result!r}). Give the next subtask, or FINISH if that completes the request.",
            )
        if last.acted or last.verified:
            return Verdict(
                "FINISH",
                f"{last.result or 'Done.'} (the subtask {subtask!r} was already done on {target}; "
                "it was not assigned again)",
            )
        return Verdict(
            "FAIL",
            f"The subtask {subtask!r} 'finished' on {target} without any action taking effect "
            f"(result {last.result!r}), and was assigned again: stopped instead of repeating it.",
        )
    if len(same) >= MAX_ATTEMPTS:
        return Verdict(
            "FAIL",
            f"The subtask {subtask!r} failed {len(same)} times on {target}: "
            f"{same[-1].result or 'no reason given'}",
        )
    return None


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
    if answers or any(r.get("status") == "FINISH" for r in records):
        return False
    return not any(
        a.get("function") not in ("", "select_application_window")
        and str((a.get("result") or {}).get("status")) == "success"
        for a in host_actions
    )


def uncovered(request: str, records: Iterable[dict[str, Any]]) -> str:
    """The texts the request quotes and the file names it gives that no finished subtask mentions
    (in its text or its result): a FINISH before them leaves part of the request undone. Only the
    host's own request counts, not the prerequisite results a Galaxy task brings along."""
    request = own_request(request)
    done = canonical_name(
        " ".join(
            f"{r.get('subtask', '')} {r.get('result', '')}" for r in records if r.get("status") == "FINISH"
        )
    )
    wanted = [f'"{t}"' for t in claim_of(request).texts if canonical_name(t) not in done]
    quoted = " ".join(claim_of(request).texts)
    wanted += [n for n in file_names(request) if n not in quoted and canonical_name(n) not in done]
    return ", ".join(wanted)


def uncovered_note(missing: str) -> str:
    """The note of a FINISH refused because part of the request is undone."""
    return (
        f"FINISH refused: the request also asks for {missing}, which no finished subtask has done. "
        "Give it to a target as the next subtask (FINISH again only if it is done)."
    )


UNBACKED_FINISH_NOTE = (
    "FINISH refused: no subtask has been done in this request yet, so nothing shows the result. "
    "Assign the work to a target with select_application_window first (FINISH again only if the "
    "request needs no application)."
)
