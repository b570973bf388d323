"""When a FINISH really finishes: the command it carries must succeed, and its result must be grounded.

A small model finishes too early and states facts it never saw. These rules keep it honest:

* A FINISH that carries a call means "this one call completes the request". The call runs; only if
  it succeeds (every result ok: exit code 0, no error) does the task end. If it fails, the
  step becomes CONTINUE and the model sees the error output next.
* A FINISH without a call and with an empty result before anything ran is refused (a small model
  "finishes" a chore it never started).
* A FINISH whose ``result`` states facts (numbers, file names) that appear nowhere in the request,
  the commands run or the outputs seen, or a FINISH without a call right after a command failed with
  an error, is refused with a note saying why: the step becomes CONTINUE. A refusal never follows a
  refusal (the model may insist: the second FINISH stands) and there are at most
  ``MAX_FINISH_REFUSALS`` per request, so a guard can cost a step or two, never a loop.

A FAIL right after a failed command is refused the same way (once; the model may insist): a
small model gives up after one failed command although its error usually shows what would work.

When a finishing call printed something the result does not already quote, that output is added to
the result: the user sees the real output, not only the model's summary of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starweave.agents.linux.counting import miscounted_files
from starweave.agents.linux.feedback import clip, describe_results
from starweave.agents.linux.response import LinuxAgentStatus
from starweave.commands import Result

if TYPE_CHECKING:
    from starweave.agents.linux.agent import LinuxAgent

MAX_FINISH_REFUSALS = 2
#: Characters of a finishing call's output added to the result.
FINISH_OUTPUT_CHARS = 400
# A number (1, 24, 3.5, 1,024) not glued to letters or other digits, and a file-like name: a stem,
# a dot and an extension of 2-8 characters starting with a letter (a.txt, notes.md, data.tar.gz).
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_GROUPING = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NAME = re.compile(r"(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{1,7}\b")

FAILED_FINISH_NOTE = "Not finished: the command failed."

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
class FinishDecision:
    """What a FINISH answer turns into: the step's status, a note for the model, the final result."""

    status: str
    note: str = ""
    result: str = ""


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


def seen_text(agent: LinuxAgent, request: str, results: list[Result]) -> str:
    """Everything the model has seen that a result may quote: the request, every call and output."""
    parts = [request]
    for item in agent.memory.content:
        parts.append(str(item.get_value("call") or ""))
        parts.append(str(item.get_value("output") or ""))
    if results:
        parts.append(describe_results(results))
    return "\n".join(parts)


def _may_refuse(agent: LinuxAgent, request: str) -> bool:
    agent.begin_request(request)
    return not agent.refused_last_step and agent.finish_refusals < MAX_FINISH_REFUSALS


def _refuse(agent: LinuxAgent, note: str) -> FinishDecision:
    agent.finish_refusals += 1
    agent.refused_last_step = True
    return FinishDecision(LinuxAgentStatus.CONTINUE.value, note)


def _stdout(results: list[Result]) -> str:
    texts = [str(r.result.get("stdout") or "").strip() for r in results if isinstance(r.result, dict)]
    return "\n".join(t for t in texts if t)


def decide_finish(
    agent: LinuxAgent, request: str, result: str, results: list[Result], ran_call: bool, command: str = ""
) -> FinishDecision:
    """Settle a FINISH answer once its call (if any) has run; see the module docstring.

    Call it before the step goes into memory: the failure it looks back at is the previous step's.
    """
    may_refuse = _may_refuse(agent, request)
    agent.refused_last_step = False
    if ran_call and not all(r.ok for r in results):
        return FinishDecision(LinuxAgentStatus.CONTINUE.value, FAILED_FINISH_NOTE)
    if not ran_call and may_refuse and not result.strip() and not _ran_a_call(agent, request):
        return _refuse(agent, NOTHING_DONE_NOTE)
    if not ran_call and may_refuse:
        previous = agent.memory.get_latest_item()
        error = failed_with_error(_results_of(previous.get_value("results"))) if previous else ""
        if error:
            return _refuse(
                agent,
                f"Not finished: the last command failed ({error}). Fix it and run it again, or reply "
                "FAIL if the request cannot be done. If that failure is itself the answer, reply "
                "FINISH again.",
            )
    counted = _miscounted(agent, request, results, command if ran_call else None)
    if counted and may_refuse:
        return _refuse(agent, counted)
    missing = unseen_facts(result, seen_text(agent, request, results))
    if missing and may_refuse:
        facts = ", ".join(missing[:3])
        if ran_call:
            note = (
                f"Not finished: your result states {facts} before you saw the output. The output is "
                "below: reply FINISH with the answer taken from it."
            )
        else:
            note = (
                f"Not finished: your result states {facts}, which no output showed. Run a command "
                "that prints it, then answer with what it printed."
            )
        return _refuse(agent, note)
    printed = _stdout(results) if ran_call else ""
    if printed and printed not in result:
        result = f"{result}\nOutput:\n{clip(printed, FINISH_OUTPUT_CHARS)}".strip()
    return FinishDecision(LinuxAgentStatus.FINISH.value, "", result)


def decide_fail(agent: LinuxAgent, request: str, result: str) -> FinishDecision:
    """Settle a FAIL answer: right after a failed command it is refused once, since the failure's
    output (and its hint) usually shows another way; the model may insist."""
    may_refuse = _may_refuse(agent, request)
    agent.refused_last_step = False
    previous = agent.memory.get_latest_item()
    failed = previous is not None and not all(r.ok for r in _results_of(previous.get_value("results")))
    if may_refuse and failed and previous is not None and previous.get_value("results"):
        return _refuse(agent, GAVE_UP_NOTE)
    return FinishDecision(LinuxAgentStatus.FAIL.value, "", result)


def _miscounted(agent: LinuxAgent, request: str, results: list[Result], command: str | None) -> str:
    """The note for a FINISH whose file count came from a command that does not count files (see
    ``counting``): this step's ``command`` and output, or, without a call (None), the previous
    step's; else ""."""
    if command is not None:
        return miscounted_files(request, command, _stdout(results), ran_call=True)
    previous = agent.memory.get_latest_item()
    if previous is None:
        return ""
    action = previous.get_value("action")
    arguments = action.get("arguments") if isinstance(action, dict) else None
    earlier = str(arguments.get("command") or "") if isinstance(arguments, dict) else ""
    return miscounted_files(request, earlier, str(previous.get_value("output") or ""), ran_call=False)


def _ran_a_call(agent: LinuxAgent, request: str) -> bool:
    """Whether some step for ``request`` ran a call (its memory item holds results)."""
    return any(
        item.get_value("request") == request and item.get_value("results") for item in agent.memory.content
    )


def _results_of(value: Any) -> list[Result]:
    """The results a memory item recorded (as dumps), as Result objects again."""
    if not isinstance(value, list):
        return []
    return [r if isinstance(r, Result) else Result.model_validate(r) for r in value if r]
