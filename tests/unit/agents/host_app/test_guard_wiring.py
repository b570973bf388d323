"""The guards wired into the agents, on the fake desktop with replayed answers: the first answer of a
text-only AppAgent must act, the same action three times in a row ends the subtask, the text-only
prompt comes as chat turns, the collector without the ``value`` field, and the HostAgent's
repeat verdicts and unfounded FINISH."""

from __future__ import annotations

import asyncio
from typing import Any

from starweave.agent import Context, ContextNames
from starweave.agents.app import AppAgent
from starweave.agents.app.execution import fetch_controls
from starweave.agents.host import HostAgent
from starweave.commands import Command, Result, ResultStatus
from starweave.session.session import BaseRound

NO_ACTION = {"function": "", "arguments": {}}


def app(status: str, action: Any, result: str = "") -> dict[str, Any]:
    return {"observation": "o", "thought": "t", "action": action, "status": status, "result": result}


def click(label: str, name: str) -> dict[str, Any]:
    return {"function": "click_input", "arguments": {"name": name, "id": label}}


def host(status: str, target: str = "", subtask: str = "", result: str = "") -> dict[str, Any]:
    function = "select_application_window" if target else ""
    return {
        "observation": "o",
        "thought": "t",
        "current_subtask": subtask,
        "status": status,
        "function": function,
        "arguments": {"id": target} if target else {},
        "result": result,
    }


async def run(context: Context, agent: Any, max_step: int = 20) -> None:
    round_ = BaseRound("t", context, "request", agent, 0, max_step)
    async with asyncio.timeout(30):
        await round_.run()


def subtask_app(llm: Any) -> AppAgent:
    """A text-only AppAgent on the fake calculator, started on a subtask as the host would."""
    agent = AppAgent(name="AppAgent/calc", process_name="calc", app_root_name="calc")
    agent.llm = llm
    agent.begin_subtask("type 7", "")
    return agent


async def test_a_text_only_agent_cannot_finish_before_acting(
    context: Context, desk: Any, replay: Any
) -> None:
    # Labels of the fake calculator: 1 is the display, 2..11 the digits 0..9.
    desk.selected = "1"
    llm = replay(
        [app("FINISH", NO_ACTION, "7"), app("CONTINUE", click("9", "7")), app("FINISH", NO_ACTION, "7")]
    )
    agent = subtask_app(llm)
    await run(context, agent)
    # The first answer, a FINISH before anything ran, was refused (guards: started).
    assert agent.llm_calls == 3 and len(agent.memory.content) == 3
    guessed = agent.memory.content[0]
    assert guessed.get_value("status") == "CONTINUE"
    assert guessed.get_value("output").startswith("Not finished: no action has run in this subtask")
    assert desk.windows["1"].display == "7" and agent.status == "FINISH"


async def test_the_same_action_three_times_in_a_row_ends_the_subtask(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.selected = "1"
    llm = replay([app("CONTINUE", click("9", "7"))] * 3)
    agent = subtask_app(llm)
    await run(context, agent)
    assert desk.windows["1"].display == "77"  # the third was not run
    assert agent.status == "FAIL"
    record = context.get(ContextNames.PREVIOUS_SUBTASKS)[-1]
    assert record["status"] == "FAIL"
    assert record["result"] == (
        "Stopped: the same action click_input(name='7', id='9') was given 3 times in a row without "
        "getting the subtask done."
    )


async def test_the_text_only_prompt_is_chat_turns_with_the_controls_in_the_last_turn_only(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.selected = "1"
    llm = replay([app("CONTINUE", click("9", "7")), app("FINISH", NO_ACTION, "7")])
    agent = subtask_app(llm)
    await run(context, agent)
    first, second = agent.memory.content
    messages = agent.message_constructor("request", [], [], False)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == "Request: request\nSubtask: type 7\nApplication: calc"
    # The model's own text comes back as it wrote it (the server's prompt cache matches it).
    assert messages[2]["content"] == first.get_value("answer_text") and messages[2]["content"]
    assert messages[4]["content"] == second.get_value("answer_text")
    outcome = messages[3]["content"]
    assert outcome.startswith('Outcome: click_input on Button "7" (id 9) -> success')
    assert "Controls now" not in outcome  # an older turn's controls are stale: only the last lists them
    assert (
        "Controls now:\n(no controls were found in the window)\nIf the subtask is done"
        in messages[5]["content"]
    )


class ReferenceCollector:
    """A dispatcher whose collector knows only the reference's control fields."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    async def execute_commands(self, commands: list[Command], timeout: float = 0) -> list[Result]:  # noqa: ASYNC109
        fields = list(commands[0].parameters["field_list"])
        self.asked.append(fields)
        if "value" in fields:
            return [Result(status=ResultStatus.FAILURE, error="Unknown control field(s) ['value']")]
        return [Result(status=ResultStatus.SUCCESS, result=[{"label": "1", "control_text": "OK"}])]


async def test_a_collector_without_the_value_field_is_asked_for_the_reference_fields() -> None:
    dispatcher = ReferenceCollector()
    controls = await fetch_controls(dispatcher, with_values=True)
    assert [(c.id, c.name, c.value) for c in controls] == [("1", "OK", "")]
    assert ["value" in f for f in dispatcher.asked] == [True, False]


async def test_a_subtask_done_before_is_refused_once_then_ends_the_round(
    context: Context, desk: Any, replay: Any
) -> None:
    llm = replay(
        [
            host("ASSIGN", "1", "type 7 in the calculator"),
            app("FINISH", click("9", "7"), "The display shows 7"),
            host("ASSIGN", "1", "Type 7 in the calculator."),
            host("ASSIGN", "1", "type 7 in the calculator"),
        ]
    )
    agent = HostAgent()
    agent.llm = llm
    await run(context, agent)
    assert agent.status == "FINISH" and desk.windows["1"].display == "7"
    refused = agent.memory.content[1]
    assert refused.get_value("status") == "CONTINUE"
    assert refused.get_value("output").startswith(
        "Not assigned: the subtask 'Type 7 in the calculator.' is done already on calc (result "
        "'The display shows 7'). Give the next subtask, or FINISH if that completes the request."
    )
    assert context.get(ContextNames.ROUND_RESULT) == (
        "The display shows 7 (the subtask 'type 7 in the calculator' was already done on calc; "
        "it was not assigned again)"
    )
    assert context.get(ContextNames.LLM_CALLS) == 4


async def test_after_a_refused_repeat_the_host_moves_on_to_the_next_subtask(
    context: Context, desk: Any, replay: Any
) -> None:
    llm = replay(
        [
            host("ASSIGN", "1", "type 7 in the calculator"),
            app("FINISH", click("9", "7"), "The display shows 7"),
            host("ASSIGN", "1", "type 7 in the calculator"),  # the copied answer, refused once
            host("ASSIGN", "2", "write 7 in the editor"),
            app(
                "FINISH",
                {"function": "set_edit_text", "arguments": {"name": "Document", "id": "1", "text": "7"}},
                "7",
            ),
            host("FINISH", result="7, written"),
        ]
    )
    agent = HostAgent()
    agent.llm = llm
    await run(context, agent)
    assert agent.status == "FINISH" and desk.windows["2"].text == "7"
    assert [r["application"] for r in context.get(ContextNames.PREVIOUS_SUBTASKS)] == ["calc", "editor"]


async def test_a_finish_with_nothing_done_is_refused_once(context: Context, desk: Any, replay: Any) -> None:
    llm = replay([host("FINISH", result="7 + 8 = 15"), host("FINISH", result="7 + 8 = 15")])
    agent = HostAgent()
    agent.llm = llm
    await run(context, agent)
    first, second = agent.memory.content
    assert first.get_value("status") == "CONTINUE"
    assert first.get_value("output").startswith("FINISH refused: no subtask has been done")
    # The refused answer's result is no result: it is not in the history the agents see.
    assert first.get_value("result") == ""
    assert second.get_value("status") == "FINISH" and agent.status == "FINISH"
    assert context.get(ContextNames.ROUND_RESULT) == "7 + 8 = 15"


async def test_a_finish_without_a_result_reports_the_last_subtasks(
    context: Context, desk: Any, replay: Any
) -> None:
    llm = replay(
        [
            host("ASSIGN", "1", "type 7"),
            app("FINISH", click("9", "7"), "7"),
            host("FINISH"),
        ]
    )
    agent = HostAgent()
    agent.llm = llm
    await run(context, agent)
    assert agent.status == "FINISH" and context.get(ContextNames.ROUND_RESULT) == "7"


def test_a_text_only_host_reads_the_subtasks_one_per_line_and_no_screenshot_path() -> None:
    from starweave.agents.host.targets import TargetInfo

    agent = HostAgent()
    done = [
        {"application": "calc", "subtask": "type 7", "status": "FINISH", "result": "7", "agent_name": "A"}
    ]
    target = TargetInfo(kind="window", id="1", name="Calculator", type="Window")
    system, user = agent.message_constructor("type 7", [target], [], done, screenshot_path="/logs/step3.png")
    assert user["content"] == (
        'Request: type 7\nTargets:\n[1] window "Calculator" (Window)\nSubtasks done:\n'
        "- calc: type 7 -> FINISH: 7\nYour earlier steps:\n(none yet)"
    )
    # The examples come as an exchange in compact JSON, the way the model answers.
    assert '{"observation":"The calculator is open.","thought":"The calculator does it."' in system["content"]
    agent.prompter.is_visual = True
    _, visual = agent.message_constructor("type 7", [target], [], done, screenshot_path="/logs/step3.png")
    assert "/logs/step3.png" in str(visual["content"]) and '"result": "7"' in str(visual["content"])


async def test_continue_without_an_action_makes_the_next_answer_act(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.selected = "1"
    llm = replay(
        [
            app("CONTINUE", click("9", "7")),
            app("CONTINUE", NO_ACTION),
            app("CONTINUE", NO_ACTION),  # refused by the schema: an action is due
            app("FINISH", click("10", "8"), "78"),
        ]
    )
    agent = subtask_app(llm)
    await run(context, agent)
    idle = agent.memory.content[1]
    assert idle.get_value("output").startswith("No action was given")
    assert desk.windows["1"].display == "78" and agent.status == "FINISH"
    assert agent.llm_calls == 4 and len(agent.memory.content) == 3


async def test_a_repeated_successful_read_is_not_run_and_its_tool_is_withheld_once(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.selected = "1"
    read = {"function": "texts", "arguments": {"name": "0", "id": "1"}}
    llm = replay(
        [
            app("CONTINUE", read),
            app("CONTINUE", read),
            app("CONTINUE", read),  # refused by the schema: texts is withheld for one answer
            app("FINISH", NO_ACTION, "The display shows 0"),
        ]
    )
    agent = subtask_app(llm)
    await run(context, agent)
    first, again, finished = agent.memory.content
    assert first.get_value("action")[0]["result"]["status"] == "success"
    assert again.get_value("output").startswith("Not run: it is the same as the last step's action")
    assert again.get_value("action")[0]["result"]["status"] == "skipped"
    assert finished.get_value("status") == "FINISH" and agent.llm_calls == 4


async def test_going_round_in_a_circle_ends_the_subtask(context: Context, desk: Any, replay: Any) -> None:
    desk.selected = "1"
    read = {"function": "texts", "arguments": {"name": "0", "id": "1"}}
    llm = replay([app("CONTINUE", a) for a in (read, click("9", "7"), read, click("9", "7"), read)])
    agent = subtask_app(llm)
    await run(context, agent)
    assert desk.windows["1"].display == "77" and agent.status == "FAIL"
    assert context.get(ContextNames.PREVIOUS_SUBTASKS)[-1]["result"] == (
        "Stopped: the action texts(name='0', id='1') was given 3 times in this subtask "
        "without getting it done."
    )


async def test_after_a_refused_claim_an_answer_that_looks_finishes_with_what_is_shown(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.selected = "1"
    read = {"function": "texts", "arguments": {"name": "7", "id": "1"}}  # the display
    llm = replay(
        [
            app("FINISH", click("9", "7"), "7 + 8 = 15"),  # the display shows 7
            app("CONTINUE", read),
            app("FINISH", NO_ACTION, "The display shows 7"),
        ]
    )
    agent = subtask_app(llm)
    await run(context, agent)
    claimed, verified, finished = agent.memory.content
    # 7 is the subtask's own number: 8 and 15 are what the result claims.
    assert claimed.get_value("output").startswith("FINISH refused: the result '7 + 8 = 15' claims 8, 15")
    assert verified.get_value("action")[0]["result"]["status"] == "success"
    assert finished.get_value("status") == "FINISH" and agent.outcomes[-1].verified


async def test_a_claim_the_window_contradicts_given_again_right_away_ends_the_subtask(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.selected = "1"
    read = {"function": "texts", "arguments": {"name": "7", "id": "1"}}  # the display
    llm = replay([app("FINISH", click("9", "7"), "7 + 8 = 15"), app("FINISH", read, "15")])
    agent = subtask_app(llm)
    await run(context, agent)
    assert agent.status == "FAIL" and agent.llm_calls == 2
    result = context.get(ContextNames.PREVIOUS_SUBTASKS)[-1]["result"]
    assert result.startswith(
        "FINISH refused again: the result '15' claims 15, which the window does not show"
    )
    assert result.endswith("The subtask ends as FAIL.")
