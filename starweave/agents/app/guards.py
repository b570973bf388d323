"""The AppAgent's step guards that need the application: the FINISH check and the repeat stop.

``check_finish`` reads the window again after the step's actions and compares the FINISH result
with it (see verify.py); ``repeat_stop`` ends a subtask in which the model gives the same action
again and again (a small model copies its previous answer, even when that action was refused).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.execution import fetch_controls
from starweave.agents.app.response import AppAgentResponse, AppAgentStatus
from starweave.agents.app.verify import (
    MAX_FINISH_REFUSALS,
    Evidence,
    action_texts,
    claim_of,
    claim_reason,
    contradiction,
    file_evidence,
    file_names,
    missing_texts,
    refusal_note,
    unsaved_files,
    window_texts,
)
from starweave.errors import ToolError

if TYPE_CHECKING:
    from starweave.agent import ProcessingContext
    from starweave.agents.app.agent import AppAgent

logger = logging.getLogger(__name__)

#: The same action this many times in a row ends the subtask (FAIL) instead of running again.
MAX_SAME_ACTIONS = 3
#: Tools whose repetition is an input of its own (a second click on "1" types 11): never skipped.
REPEATABLE = frozenset(
    {"click_input", "keyboard_input", "wheel_mouse_input", "click_on_coordinates", "drag_on_coordinates"}
)
SKIPPED_REPEAT = (
    "Not run: it is the same as the last step's action, which succeeded (its outcome is above). "
    "Give another action, or FINISH if the subtask is done."
)


def repeat_check(agent: AppAgent, parsed: AppAgentResponse) -> tuple[str, str]:
    """``(stop, skip)``: why the subtask ends because ``parsed`` repeats the last actions once too often,
    and why they are not run again this time (the same as the last step's, which all succeeded, and
    none of them an input that adds up); "" when neither."""
    call = parsed.call_string() if parsed.actions else ""
    same = bool(call) and call == agent.last_call
    agent.same_calls = agent.same_calls + 1 if same else (1 if call else 0)
    agent.last_call = call
    if agent.same_calls >= MAX_SAME_ACTIONS:
        stop = f"Stopped: the same action {call} was given {agent.same_calls} times in a row without getting "
        return stop + "the subtask done.", ""
    # Going round in a circle (A, A, B, A, A, B...) repeats one action too, if not in a row.
    given = 1 + sum(
        1 for item in agent.memory.content[agent.subtask_start :] if item.get_value("call") == call
    )
    if call and given >= MAX_SAME_ACTIONS and not any(a.function in REPEATABLE for a in parsed.actions):
        return (
            f"Stopped: the action {call} was given {given} times in this subtask without getting it done.",
            "",
        )
    if same and agent.last_call_ok and not any(a.function in REPEATABLE for a in parsed.actions):
        # A model copying its last answer copies it again: the next answer may not use these tools.
        agent.banned_tools = {a.function for a in parsed.actions}
        return "", SKIPPED_REPEAT
    return "", ""


async def check_finish(
    agent: AppAgent, context: ProcessingContext, result: str, info: ListActionCommandInfo
) -> tuple[str, str]:
    """FINISH, or (CONTINUE or, after too many refusals, FAIL, with the note) when the claimed result
    is neither in the window nor in what the subtask's actions produced, a text the subtask quotes
    is nowhere, or the editor's file API holds unsaved changes (see verify.py)."""
    dispatcher = agent.dispatcher(context.global_context)
    try:
        controls = await fetch_controls(dispatcher, with_values=True)
    except ToolError:
        # The window is gone (the last action may have closed it): nothing to check against.
        return AppAgentStatus.FINISH.value, ""
    window = await run_one(
        dispatcher, "get_app_window_info", {"field_list": ["control_text"]}, "data_collection"
    )
    title = (
        str(window.result.get("control_text") or "") if window.ok and isinstance(window.result, dict) else ""
    )
    actions = [*agent.subtask_actions(), *info.to_list_of_dicts()]
    evidence = Evidence(window_texts(controls, title), action_texts(actions))
    missing = contradiction(result, evidence)
    reason = claim_reason(result, missing) if missing else ""
    if not reason:
        broad = Evidence(
            window_texts(controls, title, every_name=True), action_texts(actions, every_argument=True)
        )
        absent = missing_texts(agent.subtask, broad, file_evidence(title, actions))
        reason = (
            f"the subtask asks for {absent}, which neither the window nor your actions have" if absent else ""
        )
        if file_names(absent) and "write_document" in {t.get("name") for t in agent.known_tools}:
            reason += " (a file is written and saved with write_document, save true)"
    if not reason and "list_open_files" in {t.get("name") for t in agent.known_tools}:
        listing = await run_one(dispatcher, "list_open_files", {}, "action")
        unsaved = unsaved_files(listing.result) if listing.ok else []
        reason = f"{', '.join(unsaved)} has unsaved changes: save it with save_file" if unsaved else ""
    if not reason:
        agent.finish_verified = bool(claim_of(result))
        return AppAgentStatus.FINISH.value, ""
    agent.finish_refusals += 1
    # A model whose FINISH was refused must act before claiming one again.
    agent.must_act = agent.prompter.text_only
    final = agent.finish_refusals > MAX_FINISH_REFUSALS
    logger.info("%s: FINISH refused (%d): %s", agent.name, agent.finish_refusals, reason)
    status = AppAgentStatus.FAIL if final else AppAgentStatus.CONTINUE
    return status.value, refusal_note(reason, controls, final)
