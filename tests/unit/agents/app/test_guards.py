"""The AppAgent's guards one by one (guards.py, finish_guards.py), on hand-made steps: each one's
verdict, what it remembers in the GuardState, and the table switched off."""

from __future__ import annotations

from typing import Any

from starweave.agent.guards import Decision, GuardState, Verdict
from starweave.agent.memory import MemoryItem
from starweave.agents.app.actions import ActionCommandInfo, ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.effect import NO_EFFECT, effect_note, fingerprint
from starweave.agents.app.finish_guards import Claimed, Saved, Started, Unfinished
from starweave.agents.app.guards import (
    Act,
    Loop,
    Repeat,
    after_refusal,
    app_guards,
    remember_given,
    remember_run,
)
from starweave.agents.app.response import AppAction
from starweave.agents.app.step import MUST_ACT, VERIFIED, WITHHELD, AppStep, WindowNow
from starweave.commands import Result, ResultStatus


def display(text: str) -> list[Control]:
    """A calculator-like window whose display holds ``text``."""
    return [Control("1", "", "Edit", value=text), Control("2", "0", "Button"), Control("3", "=", "Button")]


def action(function: str = "set_edit_text", **arguments: Any) -> AppAction:
    return AppAction(function=function, arguments=arguments or {"name": "", "id": "1", "text": "0"})


def step(
    status: str = "CONTINUE",
    actions: list[AppAction] | None = None,
    controls: list[Control] | None = None,
    result: str = "",
    subtask: str = "subtract 12 from 30",
    memory: list[MemoryItem] | None = None,
    text_only: bool = True,
) -> AppStep:
    given = [action()] if actions is None else actions
    return AppStep(
        subtask=subtask,
        status=status,
        actions=given,
        call="; ".join(a.call_string() for a in given),
        result=result,
        controls=display("0") if controls is None else controls,
        memory=memory or [],
        text_only=text_only,
    )


def ran(the_step: AppStep, ok: bool = True) -> ListActionCommandInfo:
    info = ListActionCommandInfo()
    for a in the_step.actions:
        outcome = Result(status=ResultStatus.SUCCESS if ok else ResultStatus.FAILURE, result="done")
        info.add_action(ActionCommandInfo(function=a.function, arguments=a.arguments, result=outcome))
    return info


def settled(the_step: AppStep, window: list[Control], title: str = "Calculator") -> AppStep:
    """``the_step`` once its actions ran, with the window read again as ``window``."""
    the_step.info = ran(the_step)
    the_step._window = WindowNow(window, title)
    the_step._read = True
    return the_step


async def test_act_refuses_a_continue_without_an_action_and_asks_the_next_answer_for_one() -> None:
    state = GuardState()
    idle = step(actions=[])
    verdict = await Act().check(idle, state)
    assert verdict.decision is Decision.REFUSE and verdict.note.startswith("No action was given")
    after_refusal(state, Verdict(verdict.decision, verdict.note, "act"), idle)
    assert state.facts[MUST_ACT] is True
    assert (await Act().check(step(), state)).allowed
    assert (await Act().check(step("FINISH", actions=[]), state)).allowed  # a FINISH is judged later


async def test_repeat_refuses_an_action_that_changed_nothing_once_then_stops() -> None:
    state = GuardState()
    typed = step(controls=display("0"))
    remember_run(state, typed, ran(typed))
    # The same input again while the display still shows what it showed before: no visible effect.
    again = step(controls=display("0"))
    verdict = await Repeat().check(again, state)
    assert verdict.decision is Decision.REFUSE
    assert "changed nothing the window shows" in verdict.note and "Try another way" in verdict.note
    after_refusal(state, Verdict(verdict.decision, verdict.note, "repeat"), again)
    assert state.facts[WITHHELD] == {"set_edit_text"}
    # The model insists (the refused step ran nothing, the window is the same): stopped.
    stopped = await Repeat().check(step(controls=display("0")), state)
    assert stopped.decision is Decision.STOP and "changed nothing the window shows" in stopped.note


async def test_repeat_allows_an_action_whose_last_run_changed_the_window_or_another_action() -> None:
    state = GuardState()
    typed = step(controls=display(""))
    remember_run(state, typed, ran(typed))
    assert (await Repeat().check(step(controls=display("0")), state)).allowed  # it typed the 0
    other = step(actions=[action("keyboard_input", name="", id="1", keys="{ENTER}")])
    assert (await Repeat().check(other, state)).allowed
    # A refused step ran nothing: it is not the window's "before".
    skipped = ListActionCommandInfo()
    skipped.add_action(
        ActionCommandInfo(function="texts", arguments={}, result=Result(status=ResultStatus.SKIPPED))
    )
    remember_run(state, step(actions=[action("texts", name="", id="1")]), skipped)
    assert (await Repeat().check(step(controls=display("0")), state)).allowed


async def test_loop_stops_the_same_action_three_times_in_a_row_or_a_circle_of_reads() -> None:
    state = GuardState()
    click = [action("click_input", name="0", id="2")]
    for _ in range(2):
        assert (await Loop().check(step(actions=click), state)).allowed
        remember_given(state, step(actions=click).call)
    third = await Loop().check(step(actions=click), state)
    assert third.decision is Decision.STOP
    assert third.note == (
        "Stopped: the same action click_input(name='0', id='2') was given 3 times in a row without "
        "getting the subtask done."
    )
    read = [action("texts", name="", id="1")]
    memory = []
    for call in (read, click, read):
        item = MemoryItem()
        item.add_values_from_dict({"call": step(actions=call).call})
        memory.append(item)
    circle = await Loop().check(step(actions=read, memory=memory), GuardState())
    assert circle.decision is Decision.STOP and "3 times in this subtask" in circle.note
    # A key that adds up (0, 0, 0 types 1000's zeros) is no circle.
    clicks = await Loop().check(step(actions=click, memory=memory[1:2] * 2), GuardState())
    assert clicks.allowed


async def test_started_refuses_a_text_only_finish_before_anything_ran() -> None:
    guessed = step("FINISH", actions=[], result="18")
    guessed.info = ListActionCommandInfo()
    verdict = await Started().check(guessed, GuardState())
    assert verdict.decision is Decision.REFUSE and verdict.note.startswith("Not finished: no action")
    assert (await Started().check(settled(step("FINISH", result="18"), display("18")), GuardState())).allowed
    visual = step("FINISH", actions=[], result="18", text_only=False)
    visual.info = ListActionCommandInfo()
    assert (await Started().check(visual, GuardState())).allowed  # it sees the window


async def test_claimed_checks_the_numbers_beyond_the_subtasks_against_the_window() -> None:
    state = GuardState()
    wrong = settled(step("FINISH", result="30 - 12 = 18"), display("0"))
    verdict = await Claimed().check(wrong, state)
    assert verdict.decision is Decision.REFUSE
    assert verdict.note.startswith("FINISH refused: the result '30 - 12 = 18' claims 18, which the window")
    assert 'The window shows: Edit (id 1) "0"' in verdict.note and state.facts[VERIFIED] is False
    right = settled(step("FINISH", result="30 - 12 = 18"), display("18"))
    assert (await Claimed().check(right, state)).allowed and state.facts[VERIFIED] is True
    assert (await Claimed().check(step("CONTINUE"), state)).allowed  # only a FINISH is checked


async def test_claimed_ends_the_subtask_when_the_model_insists_or_after_two_refusals() -> None:
    state = GuardState()
    state.refused_last = True
    after_refusal(state, Verdict(Decision.REFUSE, "", "claimed"), step())
    insisted = await Claimed().check(settled(step("FINISH", result="18"), display("0")), state)
    assert insisted.decision is Decision.STOP and insisted.note.startswith("FINISH refused again")
    counted = GuardState()
    verdicts = [
        (await Claimed().check(settled(step("FINISH", result="18"), display("0")), counted)).decision
        for _ in range(3)
    ]
    assert verdicts == [Decision.REFUSE, Decision.REFUSE, Decision.STOP]


async def test_unfinished_refuses_a_finish_before_the_quoted_text_or_named_file_is_anywhere() -> None:
    subtask = "Write 'good bye' and save it as bye.txt"
    typed = [action("set_edit_text", name="", id="1", text="good bye")]
    window = [Control("1", "", "Document", value="good bye")]
    unsaved = settled(step("FINISH", typed, window, "done", subtask), window, "*Untitled - Editor")
    verdict = await Unfinished().check(unsaved, GuardState())
    assert verdict.decision is Decision.REFUSE
    assert "the subtask asks for bye.txt, which neither the window nor your actions have" in verdict.note
    done = settled(step("FINISH", typed, window, "done", subtask), window, "bye.txt - Editor")
    assert (await Unfinished().check(done, GuardState())).allowed


class Listing:
    """A dispatcher whose application lists one open document, saved or not."""

    def __init__(self, modified: bool) -> None:
        self.modified = modified

    async def execute_commands(self, commands: list[Any], timeout: float = 0) -> list[Result]:  # noqa: ASYNC109
        files = [{"path": "/ws/a.txt", "modified": self.modified, "saved": not self.modified}]
        return [Result(status=ResultStatus.SUCCESS, result={"success": True, "files": files})]


async def test_saved_refuses_a_finish_with_an_unsaved_document_when_the_application_lists_them() -> None:
    tools = [{"name": "list_open_files"}, {"name": "save_file"}]
    finish = settled(step("FINISH", result="written"), display(""))
    finish.tools, finish.dispatcher = tools, Listing(modified=True)
    verdict = await Saved().check(finish, GuardState())
    assert verdict.decision is Decision.REFUSE
    assert "/ws/a.txt has unsaved changes: save it with save_file" in verdict.note
    finish.dispatcher = Listing(modified=False)
    assert (await Saved().check(finish, GuardState())).allowed
    finish.tools = []  # no listing tool: nothing to check
    assert (await Saved().check(finish, GuardState())).allowed


async def test_the_table_asks_every_guard_and_guards_off_allows_everything() -> None:
    table = app_guards()
    assert [p.split(":")[0] for p in table.principles()] == [
        "act",
        "repeat",
        "loop",
        "started",
        "claimed",
        "unfinished",
        "saved",
    ]
    assert all(len(p.split(": ", 1)[1]) > 20 for p in table.principles())
    state = GuardState()
    idle = step(actions=[])
    assert (await table.judge(idle, state)).reason == "act"
    off = app_guards(enabled=False)
    typed = step()
    remember_run(state, typed, ran(typed))
    assert (await off.judge(step(), state)).allowed
    assert (await off.judge(settled(step("FINISH", result="99"), display("0")), GuardState())).allowed


def test_the_effect_of_the_last_action_is_what_changed_in_the_windows_texts() -> None:
    before = fingerprint(display("0"))
    assert effect_note(None, display("0")) == ""  # nothing ran since
    assert effect_note(before, display("0")) == NO_EFFECT
    assert effect_note(before, display("18")) == 'After your last action: Edit (id 1) "0" -> "18".'
    grown = [*display("0"), Control("4", "OK", "Button")]
    assert effect_note(before, grown) == "After your last action: the window's controls changed."
