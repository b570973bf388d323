"""The AppAgent's step guards: what the next answer may be, the FINISH check, the repeat stop.

``answer_schema`` narrows the answer's schema to what the model may do now; ``check_finish`` reads
the window again after the step's actions and compares the FINISH with it (see verify.py);
``repeat_check`` skips, then stops, the same action given again and again (a small model copies
its previous answer, even when that action was refused).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.execution import fetch_controls
from starweave.agents.app.response import LLM_STATUSES, AppAgentResponse, AppAgentStatus, response_json_schema
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

#: The tool of the verification step after a refused claim.
READ_TOOL = "texts"
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


def answer_schema(
    agent: AppAgent, tools: list[dict[str, Any]], controls: list[Control], multi: bool
) -> dict[str, Any]:
    """The JSON schema of the next answer: the tools and statuses the model may use now.

    A text-only model names a listed control before its id; it must act at a subtask's start and
    after an idle CONTINUE (``must_act``); a subtask that names a file starts with the application's
    file API (prompter.first_tools); a tool whose call was just repeated is withheld once; after a
    refused claim the answer is a verification step: read a control and CONTINUE (``must_read``).
    """
    text_only = agent.prompter.text_only
    shown = [c.id for c in controls if c.useful_to_text_model()] if text_only else None
    offered = [t for t in agent.prompter.prompt_tools(tools) if t.get("name") not in agent.banned_tools]
    agent.banned_tools = set()
    if text_only and not multi and len(agent.memory.content) == agent.subtask_start:
        offered = agent.prompter.first_tools(agent.subtask, offered)
    statuses: tuple[str, ...] = LLM_STATUSES
    reading = [t for t in offered if t.get("name") == READ_TOOL]
    if agent.must_read and reading:
        # A small model repeats its guess while the display shows 35: it reads the display first.
        offered, statuses = reading, (AppAgentStatus.CONTINUE.value,)
    agent.must_read = False
    required = agent.must_act or statuses != LLM_STATUSES
    return response_json_schema(offered, multi, text_only, shown, required, statuses)


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
    # Something missing has to be done: the next answer must act. A wrong claim is followed by a
    # verification step: the next answer reads a control (a model made to act picks any action and
    # keeps its claim; one that reads sees the value).
    agent.must_act = agent.prompter.text_only and not missing
    agent.must_read = agent.prompter.text_only and bool(missing)
    final = agent.finish_refusals > MAX_FINISH_REFUSALS
    logger.info("%s: FINISH refused (%d): %s", agent.name, agent.finish_refusals, reason)
    status = AppAgentStatus.FAIL if final else AppAgentStatus.CONTINUE
    return status.value, refusal_note(reason, controls, final)
