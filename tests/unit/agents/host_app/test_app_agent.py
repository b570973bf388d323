"""AppAgent on its own: speculative multi-action (and its fallback), CONFIRM, FAIL/ERROR, LLM call counts."""

from __future__ import annotations

import asyncio
from typing import Any

from starweave.agent import Context, ContextNames
from starweave.agents.app import AppAgent
from starweave.session.session import BaseRound


def app(status: str, actions: Any, result: str = "") -> dict[str, Any]:
    return {"observation": "o", "thought": "t", "action": actions, "status": status, "result": result}


def click(label: str, name: str) -> dict[str, Any]:
    return {"function": "click_input", "arguments": {"id": label, "name": name}}


def digit(d: str, offset: int = 0) -> dict[str, Any]:
    return click(str(int(d) + 2 + offset), d)


def make_agent(llm: Any, process: str, **options: Any) -> AppAgent:
    agent = AppAgent(name=f"AppAgent/{process}", process_name=process, app_root_name=process)
    agent.llm = llm
    for key, value in options.items():
        setattr(agent, key, value)
    return agent


async def run(context: Context, agent: AppAgent, desk: Any, window: str, max_step: int = 20) -> BaseRound:
    desk.selected = window
    round_ = BaseRound("t", context, "request", agent, 0, max_step)
    async with asyncio.timeout(30):
        await round_.run()
    return round_


async def test_speculative_multi_action_runs_three_actions_from_one_call(
    context: Context, desk: Any, replay: Any
) -> None:
    llm = replay([app("FINISH", [digit("7"), click("12", "+"), digit("8")], result="typed 7+8")])
    agent = make_agent(llm, "calc", action_sequence=True)
    await run(context, agent, desk, "1")
    assert desk.windows["1"].display == "7+8"
    assert agent.llm_calls == 1 and context.get(ContextNames.LLM_CALLS) == 1
    # Actions after the first are checked against a fresh walk of the window.
    assert agent.validations == 2
    item = agent.memory.content[0]
    assert item.get_value("status") == "FINISH"
    assert [a["result"]["status"] for a in item.get_value("action")] == ["success"] * 3


async def test_single_action_mode_needs_one_call_per_action(context: Context, desk: Any, replay: Any) -> None:
    llm = replay(
        [
            app("CONTINUE", digit("7")),
            app("CONTINUE", click("12", "+")),
            app("FINISH", digit("8"), result="typed"),
        ]
    )
    agent = make_agent(llm, "calc")
    await run(context, agent, desk, "1")
    assert desk.windows["1"].display == "7+8"
    assert agent.llm_calls == 3 and context.get(ContextNames.LLM_CALLS) == 3


async def test_speculative_sequence_falls_back_when_the_window_changed(
    context: Context, desk: Any, replay: Any
) -> None:
    # "Mode" adds two buttons at the top: label 9 no longer means "7".
    llm = replay(
        [
            app("FINISH", [click("14", "Mode"), digit("7"), digit("8")], result="too early"),
            app("CONTINUE", digit("7", offset=2)),
            app("FINISH", digit("8", offset=2), result="typed 78"),
        ]
    )
    agent = make_agent(llm, "calc", action_sequence=True, fallback_steps=2)
    await run(context, agent, desk, "1")
    window = desk.windows["1"]
    assert window.scientific and window.display == "78"
    first = agent.memory.content[0]
    assert first.get_value("status") == "CONTINUE"  # not FINISH: the plan did not run to its end
    statuses = [a["result"]["status"] for a in first.get_value("action")]
    assert statuses == ["success", "skipped", "skipped"]
    assert "the window changed" in first.get_value("output")
    # The two fallback steps asked for one action (the schema's action was an object, not a list).
    assert [m.get_value("response")["action"].__len__() for m in agent.memory.content[1:]] == [1, 1]
    assert agent.llm_calls == 3 and agent.single_action_steps == 0


async def test_confirm_blocks_a_sensitive_action_unless_approved(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.windows["2"].text = "keep me"
    asked: list[tuple[str, str]] = []

    async def refuse(action: str, reason: str) -> bool:
        asked.append((action, reason))
        return False

    llm = replay([app("FINISH", click("3", "Delete All"), result="cleared")])
    agent = make_agent(llm, "editor", confirmer=refuse)
    await run(context, agent, desk, "2")
    assert desk.windows["2"].text == "keep me"
    assert agent.status == "FAIL" and len(asked) == 1 and "Delete All" in asked[0][1]
    assert "did not allow" in agent.memory.content[-1].get_value("output")


async def test_confirm_approved_runs_the_action(context: Context, desk: Any, replay: Any) -> None:
    desk.windows["2"].text = "old"

    async def approve(action: str, reason: str) -> bool:
        return True

    llm = replay([app("FINISH", click("3", "Delete All"), result="cleared")])
    agent = make_agent(llm, "editor", confirmer=approve)
    await run(context, agent, desk, "2")
    assert desk.windows["2"].text == ""
    assert agent.status == "FINISH"
    assert agent.memory.content[-1].get_value("result") == "cleared"


async def test_confirm_without_anyone_to_ask_refuses_and_auto_approve_runs(
    context: Context, desk: Any, replay: Any
) -> None:
    desk.windows["2"].text = "x"
    agent = make_agent(replay([app("FINISH", click("3", "Delete All"))]), "editor")
    await run(context, agent, desk, "2")
    assert desk.windows["2"].text == "x" and agent.status == "FAIL"
    agent2 = make_agent(replay([app("FINISH", click("3", "Delete All"))]), "editor2", auto_approve=True)
    agent2.process_name = agent2.app_root_name = "editor"
    context.set(ContextNames.SESSION_STEP, 0)
    await run(context, agent2, desk, "2")
    assert desk.windows["2"].text == "" and agent2.status == "FINISH"


async def test_model_fail_ends_the_subtask(context: Context, desk: Any, replay: Any) -> None:
    agent = make_agent(
        replay([app("FAIL", {"function": "", "arguments": {}}, result="no such button")]), "calc"
    )
    round_ = await run(context, agent, desk, "1")
    assert agent.status == "FAIL"
    assert round_.agent.state.is_round_end()
    assert context.get(ContextNames.PREVIOUS_SUBTASKS)[0]["status"] == "FAIL"


async def test_unparseable_answers_become_error(context: Context, desk: Any, replay: Any) -> None:
    agent = make_agent(replay(["not json", "still not json"]), "calc")
    await run(context, agent, desk, "1")
    assert agent.status == "ERROR"
    assert "no valid JSON answer" in context.get(ContextNames.ERROR_MESSAGE)
    assert agent.llm_calls == 0 and desk.windows["1"].display == "0"


async def test_a_closed_window_is_an_error(context: Context, desk: Any, replay: Any) -> None:
    agent = make_agent(replay([app("FINISH", digit("7"))]), "calc")
    desk.selected = "9"
    round_ = BaseRound("t", context, "r", agent, 0, 5)
    async with asyncio.timeout(30):
        await round_.run()
    assert agent.status == "ERROR"
    assert "controls" in context.get(ContextNames.ERROR_MESSAGE)


async def test_invalid_control_label_is_not_run(context: Context, desk: Any, replay: Any) -> None:
    # A visual model's answer is not bound to the listed labels by the schema (a text-only one's is).
    llm = replay([app("FINISH", click("99", "7")), app("FINISH", digit("7"), result="7")])
    agent = make_agent(llm, "calc")
    agent.prompter.is_visual = True
    await run(context, agent, desk, "1")
    first = agent.memory.content[0]
    assert first.get_value("status") == "CONTINUE"
    assert "not in the control list" in first.get_value("output")
    assert desk.windows["1"].display == "7" and agent.status == "FINISH"
