"""The LinuxAgent's guards (the contract is in ``starweave.agent.guards``), one principle each.

Asked about the proposed step, before its call runs:

* ``act``: a step that goes on must run something (twice in a row without: stop);
* ``repeat``: a call that just succeeded is not run again, its output is already shown (a second
  such repeat in a row: stop);
* ``retry``: a call that failed twice is not tried a third time (stop).

Asked about a FINISH or FAIL once its call (if any) has run:

* ``started``: a FINISH needs work behind it, something run or an answer given;
* ``after_error``: a FINISH right after a command failed with an error first fixes it, or says the
  failure is the answer;
* ``grounded``: every number and file name a result states was seen in the request or an output;
* ``claimed``: a file a result names is in the workspace, or was before the run;
* ``checked``: a FINISH rests on what the files the run changed hold now, seen after their change;
* ``gave_up``: a FAIL right after a failed command tries another way first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from starweave.agent.guards import ALLOW, GuardState, GuardTable, Verdict, refuse, stop
from starweave.agent.memory import MemoryItem
from starweave.agents.linux.feedback import clip, describe_results, results_failed
from starweave.agents.linux.orientation import Listing
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.agents.linux.world import (
    MAX_CHANGES,
    WorldEnd,
    absent_names,
    change_text,
    needs_a_look,
    read_end,
    snapshot,
)
from starweave.commands import Result

CONTINUE, FINISH, FAIL = (
    LinuxAgentStatus.CONTINUE.value,
    LinuxAgentStatus.FINISH.value,
    LinuxAgentStatus.FAIL.value,
)
#: Facts the guards share in the request's GuardState.
LAST_CALL, LAST_OK, WORLD, WORLD_SHOWN, SKIP = "last_call", "last_ok", "world", "world_shown", "skip"
#: The workspace as a FINISH check last read it, with the number of calls run by then (the run's
#: evidence reuses it when no call ran since).
WORLD_END = "world_end"
CALLS = "calls"

# A number (1, 24, 3.5, 1,024) not glued to letters or other digits, and a file-like name: a stem,
# a dot and an extension of 2-8 characters starting with a letter (a.txt, notes.md, data.tar.gz).
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_GROUPING = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NAME = re.compile(r"(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{1,7}\b")

NOTHING_DONE_NOTE = (
    "Not finished: nothing has been run yet and the result is empty. Run the command that does the "
    "request (with status FINISH if that one call completes it), or reply FAIL saying why not."
)
GAVE_UP_NOTE = (
    "Not given up yet: the last command failed, but another command may work. Read its error (and "
    "the hint, if any) and try a different command; reply FAIL again only if the request truly "
    "cannot be done."
)


@dataclass
class LinuxStep:
    """What the guards see of one step: the answer, and once its call ran, the results.

    ``results`` is None while the call has not run; ``memory`` holds the earlier steps; ``dispatcher``
    and ``skip`` (the run's log folder) let a guard look at the workspace through the shell."""

    request: str
    status: str
    function: str
    arguments: dict[str, Any]
    call: str
    result: str
    memory: list[MemoryItem]
    results: list[Result] | None = None
    ran_call: bool = False
    dispatcher: Any = None
    skip: str = ""
    signature: str = field(init=False)
    _after: Listing | None = field(default=None, init=False, repr=False)
    _end: WorldEnd | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.signature = call_signature(self.function, self.arguments)

    @property
    def settling(self) -> bool:
        """Whether this is the FINISH or FAIL check (the call, if any, has run)."""
        return self.results is not None

    async def workspace_now(self, before: Listing) -> Listing | None:
        """The workspace as it is now (listed once per step, like ``before``)."""
        if self._after is None:
            self._after = await snapshot(self.dispatcher, self.skip, before.root)
        return self._after

    async def world_end(self, before: Listing, after: Listing, state: GuardState) -> WorldEnd:
        """The changes since ``before`` with their files' heads (read once per step); kept in
        ``state`` for the run's evidence."""
        if self._end is None:
            self._end = await read_end(self.dispatcher, before, after)
            state.facts[WORLD_END] = (state.counts[CALLS], self._end)
        return self._end

    def earlier(self) -> list[MemoryItem]:
        """The earlier steps of this request."""
        return [item for item in self.memory if item.get_value("request") == self.request]


def call_signature(function: str, arguments: dict[str, Any]) -> str:
    """A canonical key of a tool call, for spotting repeats."""
    return json.dumps([function, arguments], sort_keys=True)


def unseen_facts(result: str, seen: str) -> list[str]:
    """The numbers and file names in ``result`` that occur nowhere in ``seen``, in order, once each."""
    lowered = seen.lower()
    # 1,024 and 1024 are the same number, whichever side groups its digits.
    plain = f"{seen}\n{_GROUPING.sub('', seen)}"
    missing: list[str] = []
    for number in _NUMBER.findall(result):
        variants = {number, _GROUPING.sub("", number)}
        if not any(re.search(rf"(?<!\d){re.escape(v)}(?!\d)", plain) for v in variants):
            missing.append(number)
    missing.extend(name for name in _NAME.findall(result) if name.lower() not in lowered)
    return list(dict.fromkeys(missing))


def quotes_any(result: str, output: str) -> bool:
    """Whether ``result`` repeats something of ``output``: one of its lines, numbers or file names."""
    lines = [line.strip() for line in output.splitlines() if len(line.strip()) >= 3]
    tokens = [*lines, *_NUMBER.findall(output), *_NAME.findall(output)]
    return any(re.search(rf"(?<![\w.]){re.escape(t)}(?!\w)", result) for t in tokens)


def failed_with_error(results: list[Result]) -> str:
    """The error of a step whose call failed loudly (an error or stderr), else "".

    A quiet non-zero exit (grep finding nothing, diff finding differences, test -f) is an answer,
    not an error, so it does not count.
    """
    for result in results:
        if result.ok:
            continue
        value: Any = result.result
        if isinstance(value, dict) and ("exit_code" in value or "stdout" in value):
            # A shell result: the router's generic "reported success: false" says nothing more.
            error = value.get("error") or str(value.get("stderr") or "").strip()
        else:
            error = (value.get("error") if isinstance(value, dict) else None) or result.error
        if error:
            return clip(str(error), 200)
    return ""


def results_of(value: Any) -> list[Result]:
    """The results a memory item recorded (as dumps), as Result objects again."""
    if not isinstance(value, list):
        return []
    return [r if isinstance(r, Result) else Result.model_validate(r) for r in value if r]


def _typed(arguments: Any) -> list[str]:
    # The values of a call's arguments as they were typed (a command line, a file's content).
    if not isinstance(arguments, dict):
        return []
    return [str(v) for v in arguments.values() if isinstance(v, str | int | float)]


def seen_text(step: LinuxStep) -> str:
    """What the model has seen that a result may quote: the request, every call it typed (this
    step's too) and every output."""
    parts = [step.request]
    for item in step.memory:
        action = item.get_value("action")
        # The arguments as typed; the rendered call only where they are not kept (it escapes quotes).
        typed = _typed(action.get("arguments") if isinstance(action, dict) else None)
        parts.extend(typed or [str(item.get_value("call") or "")])
        parts.append(str(item.get_value("output") or ""))
    parts.extend(_typed(step.arguments))
    if step.results:
        parts.append(describe_results(step.results))
    return "\n".join(parts)


def _previous(step: LinuxStep) -> MemoryItem | None:
    return step.memory[-1] if step.memory else None


class Act:
    """No action while going on."""

    name = "act"
    principle = "A step that goes on must run something; twice in a row without, the task stops."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        if step.settling or step.status != CONTINUE:
            return ALLOW
        if step.function:
            state.counts[self.name] = 0
            return ALLOW
        if state.bump(self.name) >= 2:
            return stop("Stopped: the model gave no action twice in a row.")
        return refuse("No action was given: run a command, or reply FINISH with the answer.")


class Repeat:
    """The call that just succeeded, proposed again."""

    name = "repeat"
    principle = "A call that just succeeded is not run again: its output is already shown."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        if step.settling or not step.function:
            return ALLOW
        if step.signature != state.facts.get(LAST_CALL) or not state.facts.get(LAST_OK):
            state.counts[self.name] = 0
            return ALLOW
        if state.bump(self.name) >= 2:
            return stop(f"Stopped: the model kept repeating {step.call}.")
        return refuse(
            f"Not run again: the previous step ran exactly {step.call}; its output is above. If it "
            "answers the request, reply FINISH with the answer in result; otherwise run something else."
        )


class Retry:
    """A call that keeps failing."""

    name = "retry"
    principle = "A call that failed twice is not tried a third time: the task needs another approach."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        if step.settling or not step.function:
            return ALLOW
        failures = state.counts[failed_key(step.signature)]
        if failures > 1:
            return stop(f"Stopped: {step.call} failed {failures} times; the task needs another approach.")
        return ALLOW


class Started:
    """A FINISH before anything was done."""

    name = "started"
    principle = "A FINISH needs work behind it: a command that ran, or an answer."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        if not step.settling or step.status != FINISH or step.ran_call or step.result.strip():
            return ALLOW
        if any(item.get_value("results") for item in step.earlier()):
            return ALLOW
        return refuse(NOTHING_DONE_NOTE)


class AfterError:
    """A FINISH that ignores the error just shown."""

    name = "after_error"
    principle = "A FINISH right after an error first fixes it, or says that the failure is the answer."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        previous = _previous(step)
        if not step.settling or step.status != FINISH or step.ran_call or previous is None:
            return ALLOW
        error = failed_with_error(results_of(previous.get_value("results")))
        if not error:
            return ALLOW
        return refuse(
            f"Not finished: the last command failed ({error}). Fix it and run it again, or reply FAIL "
            "if the request cannot be done. If that failure is itself the answer, reply FINISH again."
        )


class Grounded:
    """Facts in a result that nothing showed."""

    name = "grounded"
    principle = "Every number and file name a result states was seen in the request or in an output."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        if not step.settling or step.status != FINISH:
            return ALLOW
        missing = unseen_facts(step.result, seen_text(step))
        if not missing:
            return ALLOW
        facts = ", ".join(missing[:3])
        if step.ran_call:
            return refuse(
                f"Not finished: your result states {facts} before you saw the output. The output is "
                "below: reply FINISH with the answer taken from it."
            )
        return refuse(
            f"Not finished: your result states {facts}, which no output showed. Run a command that "
            "prints it, then answer with what it printed."
        )


async def _finish_world(step: LinuxStep, state: GuardState) -> tuple[Listing, Listing] | None:
    """For a FINISH being settled: the workspace before the request (when fully listed) and now."""
    before = state.facts.get(WORLD)
    if not step.settling or step.status != FINISH or not isinstance(before, Listing) or not before.complete:
        return None
    after = await step.workspace_now(before)
    return None if after is None else (before, after)


class Claimed:
    """A result naming files that were never there."""

    name = "claimed"
    principle = "A file a result names is in the workspace, or was before the run."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        world = await _finish_world(step, state)
        absent = absent_names(step.result, *world) if world is not None and world[1].complete else []
        if not absent:
            return ALLOW
        names = ", ".join(absent[:3])
        return refuse(
            f"Not finished: your result names {names}, which the workspace does not hold and did not "
            "hold before. If the request asks for it, make it; if its absence is the answer, reply "
            "FINISH again."
        )


class Checked:
    """A FINISH over files whose new contents nobody looked at."""

    name = "checked"
    principle = "A FINISH rests on what the files the run changed hold now, seen after their last change."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        world = await _finish_world(step, state)
        if world is None:
            return ALLOW
        end = await step.world_end(*world, state)
        found, heads = end.found, end.heads
        key = repr([(c.what, c.entry) for c in found])
        if not found or state.facts.get(WORLD_SHOWN) == key:
            return ALLOW
        files = end.changed_files()[:MAX_CHANGES]
        # What the model typed (a call's text) or read (an output, the request) it knows already.
        seen = seen_text(step)
        if not any(needs_a_look(heads.get(c.entry.path), seen) for c in files):
            return ALLOW
        state.facts[WORLD_SHOWN] = key
        shown = "\n".join(change_text(c, heads.get(c.entry.path)) for c in found[:MAX_CHANGES])
        more = f"\n… and {len(found) - MAX_CHANGES} more" if len(found) > MAX_CHANGES else ""
        return refuse(
            "Not finished yet: check what the workspace holds now against the request. This run "
            f"changed:\n{shown}{more}\nIf this is what the request asks for, reply FINISH again with "
            'function ""; if not, fix it.'
        )


class GaveUp:
    """A FAIL after one failed command."""

    name = "gave_up"
    principle = "A FAIL right after a failed command first tries another way."

    async def check(self, step: LinuxStep, state: GuardState) -> Verdict:
        previous = _previous(step)
        if not step.settling or step.status != FAIL or previous is None:
            return ALLOW
        if results_failed(results_of(previous.get_value("results"))):
            return refuse(GAVE_UP_NOTE)
        return ALLOW


def failed_key(signature: str) -> str:
    """The GuardState count of a call's failures."""
    return f"failed:{signature}"


def remember_call(state: GuardState, signature: str, results: list[Result]) -> None:
    """Record a call that ran: the ``repeat`` and ``retry`` guards look back at it."""
    failed = not results or results_failed(results)
    state.facts[LAST_CALL] = signature
    state.facts[LAST_OK] = not failed
    state.bump(CALLS)
    if failed:
        state.bump(failed_key(signature))


def repeats_a_call(state: GuardState, signature: str, status: str) -> bool:
    """Whether a proposed call is the one the previous step ran, or one that already failed for
    this request (a FINISH naming the call that just succeeded is an answer, not a repeat)."""
    if state.counts[failed_key(signature)]:
        return True
    if signature != state.facts.get(LAST_CALL):
        return False
    return not (state.facts.get(LAST_OK) and status == FINISH)


def linux_guards(enabled: bool = True) -> GuardTable[LinuxStep]:
    """The LinuxAgent's table, in the order the guards are asked."""
    return GuardTable(
        [Act(), Repeat(), Retry(), Started(), AfterError(), Grounded(), Claimed(), Checked(), GaveUp()],
        enabled,
    )
