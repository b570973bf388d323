"""The AppAgent's FINISH guards, asked once the step's actions ran; the window is read again.

* ``started``: a model that does not see the window acts before it finishes;
* ``claimed``: a result's claim is visible in the window or in what the actions produced;
* ``unfinished``: a text the subtask quotes, or a file it names, is somewhere before FINISH;
* ``saved``: an application's open documents hold no unsaved changes at FINISH.

Each refusal shows what the window shows (verify.refusal_note). The FINISH refusals of a subtask
are counted together: past :data:`~starweave.agents.app.verify.MAX_FINISH_REFUSALS`, or a claim
the window contradicts given again right after its refusal, the subtask ends as FAIL (``stop``).
"""

from __future__ import annotations

from starweave.agent.guards import ALLOW, GuardState, Verdict, refuse, stop
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.step import FINISH, VERIFIED, AppStep, WindowNow, insisting
from starweave.agents.app.verify import (
    MAX_FINISH_REFUSALS,
    Evidence,
    action_texts,
    claim_of,
    claim_reason,
    contradiction,
    file_evidence,
    missing_texts,
    refusal_note,
    unsaved_files,
    window_texts,
)

#: The GuardState count of the subtask's refused FINISH answers.
FINISH_REFUSALS = "finish_refusals"
STARTED_NOTE = (
    "Not finished: no action has run in this subtask, and the result cannot rest on the window "
    "unseen. Give the action that does the subtask, or reads what the window shows."
)
#: The application's tools that list its open documents (with whether each is saved) and save one.
LISTING_TOOL, SAVE_TOOL = "list_open_files", "save_file"


async def _finishing(step: AppStep) -> WindowNow | None:
    """The window now, for a FINISH being settled (None: not one, or the window is gone)."""
    if not step.settling or step.status != FINISH:
        return None
    return await step.window_now()


def _verdict(state: GuardState, reason: str, window: WindowNow, final: bool = False) -> Verdict:
    """A refusal of the FINISH with ``reason``, or the subtask's end when refused too often."""
    final = final or state.bump(FINISH_REFUSALS) > MAX_FINISH_REFUSALS
    note = refusal_note(reason, window.controls, final)
    return stop(note) if final else refuse(note)


class Started:
    """A FINISH of a model that does not see the window, before anything ran."""

    name = "started"
    principle = (
        "A model that does not see the window acts before it finishes: a FINISH with no action "
        "run in the subtask is a guess."
    )

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        if not step.settling or step.status != FINISH or not step.text_only:
            return ALLOW
        if any(str((a.get("result") or {}).get("status")) == "success" for a in step.done_actions()):
            return ALLOW
        return refuse(STARTED_NOTE)


class Claimed:
    """A result the window does not show."""

    name = "claimed"
    principle = (
        "A claimed result must be visible in the window or in what the actions produced: the "
        "numbers it states beyond the subtask's, and the texts it quotes."
    )

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        window = await _finishing(step)
        if window is None:
            return ALLOW
        evidence = Evidence(window_texts(window.controls, window.title), action_texts(step.done_actions()))
        missing = contradiction(step.result, evidence, step.subtask)
        if not missing:
            state.facts[VERIFIED] = bool(claim_of(step.result, step.subtask))
            return ALLOW
        state.facts[VERIFIED] = False
        # The same false claim right after its refusal: the model will not look, so it fails.
        return _verdict(state, claim_reason(step.result, missing), window, insisting(state, self.name))


class Unfinished:
    """A FINISH before the text or file the subtask names is anywhere."""

    name = "unfinished"
    principle = (
        "A text the subtask quotes, or a file it names, is in the window or in what the actions did "
        "before the subtask is finished."
    )

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        window = await _finishing(step)
        if window is None:
            return ALLOW
        actions = step.done_actions()
        broad = Evidence(
            window_texts(window.controls, window.title, every_name=True),
            action_texts(actions, every_argument=True),
        )
        absent = missing_texts(step.subtask, broad, file_evidence(window.title, actions))
        if not absent:
            return ALLOW
        reason = f"the subtask asks for {absent}, which neither the window nor your actions have"
        return _verdict(state, reason, window)


class Saved:
    """A FINISH with a document left unsaved."""

    name = "saved"
    principle = "An application's open documents hold no unsaved changes when the subtask finishes."

    async def check(self, step: AppStep, state: GuardState) -> Verdict:
        if LISTING_TOOL not in step.tool_names():
            return ALLOW
        window = await _finishing(step)
        if window is None:
            return ALLOW
        listing = await run_one(step.dispatcher, LISTING_TOOL, {}, "action")
        unsaved = unsaved_files(listing.result) if listing.ok else []
        if not unsaved:
            return ALLOW
        how = f" with {SAVE_TOOL}" if SAVE_TOOL in step.tool_names() else ""
        return _verdict(state, f"{', '.join(unsaved)} has unsaved changes: save it{how}", window)
