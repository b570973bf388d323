"""The AppAgent's guards (the contract is in ``starweave.agent.guards``), one principle each.

Asked about the proposed step, before its actions run:

* ``act``: a step that goes on must act;
* ``repeat``: an action repeated with no visible effect is not repeated again (a second time: stop);
* ``loop``: the same action three times in a row, or three times in a subtask, stops the subtask.

Asked about a FINISH once its actions ran (finish_guards.py): ``started``, ``claimed``,
``unfinished``, ``saved``.

What the guards remember lives in the agent's :class:`GuardState` (one per subtask): the facts the
action phase records with :func:`remember_given` and :func:`remember_run`, and what a refusal
asks of the next answer (:func:`after_refusal`), which :func:`answer_schema` reads: an answer that
must act, tools withheld once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starweave.agent.guards import ALLOW, Decision, GuardState, GuardTable, Verdict, refuse, stop
from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.finish_guards import Claimed, Saved, Started, Unfinished
from starweave.agents.app.response import response_json_schema
from starweave.agents.app.step import (
    CONTINUE,
    IN_A_ROW,
    LAST_GIVEN,
    LAST_RUN,
    MUST_ACT,
    REFUSED_BY,
    RUN_WINDOW,
    WITHHELD,
    AppStep,
)
from starweave.commands import ResultStatus

if TYPE_CHECKING:
    from starweave.agents.app.agent import AppAgent

#: The same action this many times ends the subtask (FAIL) instead of running again.
MAX_SAME_ACTIONS = 3
#: Tools whose repetition is an input of its own (a second click on "1" types 11): a circle of
#: them is no loop, and a refused repeat does not withhold them.
REPEATABLE = frozenset(
    {"click_input", "keyboard_input", "wheel_mouse_input", "click_on_coordinates", "drag_on_coordinates"}
)
#: Guards whose refusal asks for an action: a text-only model's next answer must give one.
ASKS_FOR_ACTION = frozenset({"act", "started", "unfinished", "saved"})
NO_ACTION_NOTE = "No action was given: give the action that gets the subtask done."
UNCHANGED_NOTE = (
    "Not run: it is the same as the last step's action, and that changed nothing the window shows "
    "(its texts were the same before and after it). Try another way, or reply FAIL saying why the "
    "subtask cannot be done."
)


class Act:
    """A CONTINUE with nothing to do."""

    name = "act"
    principle = "A step that goes on must act: a CONTINUE without an action changes nothing."

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        if step.settling or step.status != CONTINUE or step.actions:
            return ALLOW
        return refuse(NO_ACTION_NOTE)


class Repeat:
    """The action that just ran, with no visible effect, proposed again."""

    name = "repeat"
    principle = (
        "An action repeated with no visible effect is not repeated again: the window's texts were "
        "the same before and after it."
    )

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        if step.settling or not step.actions:
            return ALLOW
        if step.call != state.facts.get(LAST_RUN) or state.facts.get(RUN_WINDOW) != step.window:
            state.counts[self.name] = 0
            return ALLOW
        if state.bump(self.name) >= 2:
            return stop(
                f"Stopped: {step.call} was given again after it changed nothing the window shows; "
                "the subtask needs another way."
            )
        return refuse(UNCHANGED_NOTE)


class Loop:
    """The same action again and again."""

    name = "loop"
    principle = (
        "The same action three times in a row, or one that adds nothing up three times in a "
        "subtask, is a loop: the subtask stops."
    )

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        if step.settling or not step.actions:
            return ALLOW
        row = in_a_row(state, step.call)
        if row >= MAX_SAME_ACTIONS:
            return stop(
                f"Stopped: the same action {step.call} was given {row} times in a row without "
                "getting the subtask done."
            )
        # Going round in a circle (A, A, B, A, A, B...) repeats one action too, if not in a row.
        given = 1 + sum(1 for item in step.memory if item.get_value("call") == step.call)
        if given >= MAX_SAME_ACTIONS and not any(a.function in REPEATABLE for a in step.actions):
            return stop(
                f"Stopped: the action {step.call} was given {given} times in this subtask without "
                "getting it done."
            )
        return ALLOW


def in_a_row(state: GuardState, call: str) -> int:
    """How many steps in a row will have given ``call`` if this one does."""
    if not call:
        return 0
    return state.counts[IN_A_ROW] + 1 if call == state.facts.get(LAST_GIVEN) else 1


def remember_given(state: GuardState, call: str) -> None:
    """Record the call a step gave (run or not): the ``loop`` guard counts repeats in a row."""
    state.counts[IN_A_ROW] = in_a_row(state, call)
    state.facts[LAST_GIVEN] = call


def remember_run(state: GuardState, step: AppStep, info: ListActionCommandInfo) -> None:
    """Record a step whose actions ran: its call and the window it ran on (the ``repeat`` guard
    compares it with the next step's), and that an action that worked answers a call to act."""
    if any(a.result.status is not ResultStatus.SKIPPED for a in info.actions):
        state.facts[LAST_RUN] = step.call
        state.facts[RUN_WINDOW] = step.window
    if any(a.result.ok for a in info.actions):
        state.facts[MUST_ACT] = False


def after_refusal(state: GuardState, verdict: Verdict, step: AppStep) -> None:
    """What a refusal asks of the next answer: an action (for a model that does not see the
    window, the schema demands one), or, after a refused repeat, other tools than the repeated
    ones (except those whose repetition adds up)."""
    if verdict.decision is not Decision.REFUSE:
        return
    state.facts[REFUSED_BY] = verdict.reason
    if verdict.reason in ASKS_FOR_ACTION and step.text_only:
        state.facts[MUST_ACT] = True
    if verdict.reason == Repeat.name:
        state.facts[WITHHELD] = {a.function for a in step.actions if a.function not in REPEATABLE}


def answer_schema(
    agent: AppAgent, tools: list[dict[str, Any]], controls: list[Control], multi: bool
) -> dict[str, Any]:
    """The JSON schema of the next answer: the tools the model may use now.

    A text-only model names a listed control before its id (the response format). With the guards
    on, what the last refusal asked for narrows it once: an action (``MUST_ACT``), other tools than
    a repeated one (``WITHHELD``).
    """
    text_only = agent.prompter.text_only
    shown = [c.id for c in controls if c.useful_to_text_model()] if text_only else None
    offered = agent.prompter.prompt_tools(tools)
    required = False
    if agent.guard_table.enabled:
        facts = agent.guard_state.facts
        withheld = facts.pop(WITHHELD, set())
        offered = [t for t in offered if t.get("name") not in withheld] or offered
        required = bool(facts.get(MUST_ACT))
    return response_json_schema(offered, multi, text_only, shown, required)


def app_guards(enabled: bool = True) -> GuardTable[AppStep]:
    """The AppAgent's table, in the order the guards are asked."""
    return GuardTable([Act(), Repeat(), Loop(), Started(), Claimed(), Unfinished(), Saved()], enabled)
