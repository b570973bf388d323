"""HostAgent → AppAgent → HostAgent across two fake applications, and a third-party agent target."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from starweave.agent import Context, ContextNames
from starweave.agents.app import AppAgent
from starweave.agents.host import HostAgent
from starweave.session.session import BaseRound


def host(
    status: str, function: str = "", arguments: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "observation": "o",
        "thought": "t",
        "current_subtask": extra.pop("current_subtask", ""),
        "status": status,
        "function": function,
        "arguments": arguments or {},
        "result": extra.pop("result", ""),
        **extra,
    }


def app(status: str, actions: Any, result: str = "") -> dict[str, Any]:
    return {"observation": "o", "thought": "t", "action": actions, "status": status, "result": result}


def click(label: str, name: str) -> dict[str, Any]:
    return {"function": "click_input", "arguments": {"id": label, "name": name}}


async def run_round(context: Context, agent: Any, request: str, max_step: int = 30) -> BaseRound:
    round_ = BaseRound("t", context, request, agent, 0, max_step)
    async with asyncio.timeout(30):
        await round_.run()
    return round_


async def test_host_app_host_handoff_across_two_applications(
    context: Context, desk: Any, replay: Any
) -> None:
    llm = replay(
        [
            host(
                "ASSIGN", "select_application_window", {"id": "1"}, current_subtask="type 7 in the calculator"
            ),
            app("CONTINUE", click("9", "7")),
            app(
                "FINISH",
                {"function": "texts", "arguments": {"id": "1", "name": "7"}},
                result="display shows 7",
            ),
            host("ASSIGN", "select_application_window", {"id": "2"}, current_subtask="write 7 in the editor"),
            app(
                "FINISH",
                {"function": "set_edit_text", "arguments": {"id": "1", "name": "Document", "text": "7"}},
            ),
            host("ASSIGN", "select_application_window", {"id": "1"}, current_subtask="add 1"),
            app("FINISH", click("12", "+")),
            host("FINISH", result="done: 7 written"),
        ]
    )
    agent = HostAgent()
    agent.llm = llm
    round_ = await run_round(context, agent, "compute and write")

    assert agent.status == "FINISH"
    assert round_.agent is agent
    assert desk.windows["1"].display == "7+"
    assert desk.windows["2"].text == "7"
    # One AppAgent per application, reused for the second calculator subtask, sharing the Blackboard.
    apps = list(agent.appagent_dict.values())
    assert len(apps) == 2
    assert all(isinstance(a, AppAgent) and a.blackboard is agent.blackboard and a.host is agent for a in apps)
    calc = agent.appagent_dict["calc/calc"]
    assert isinstance(calc, AppAgent) and calc.subtask == "add 1"
    subtasks = context.get(ContextNames.PREVIOUS_SUBTASKS)
    assert [(s["application"], s["status"]) for s in subtasks] == [
        ("calc", "FINISH"),
        ("editor", "FINISH"),
        ("calc", "FINISH"),
    ]
    assert subtasks[0]["result"] == "display shows 7"
    assert context.get(ContextNames.ROUND_RESULT) == "done: 7 written"
    assert context.get(ContextNames.LLM_CALLS) == 8 and llm.remaining == 0
    assert agent.llm_calls == 4 and calc.llm_calls == 3
    assert round_.subtask_amount >= 3
    # The trajectories of both agents are on the one Blackboard.
    names = {item.get_value("agent_name") for item in agent.blackboard.trajectories}
    assert {"HostAgent", "AppAgent/calc", "AppAgent/editor"} <= names
    # Screenshots are kept in the log folder.
    log_path = str(context.get(ContextNames.LOG_PATH))
    assert any(name.startswith("action_step") for name in os.listdir(log_path))


async def test_host_assigns_third_party_linux_agent(context: Context, desk: Any, replay: Any) -> None:
    import starweave.agents.linux  # noqa: F401 (registers the LinuxAgent)

    llm = replay(
        [
            host("ASSIGN", "select_application_window", {"id": "3"}, current_subtask="list files"),
            {
                "observation": "",
                "thought": "",
                "action": {
                    "function": "execute_command",
                    "arguments": {"command": "ls"},
                    "status": "CONTINUE",
                },
                "result": "",
            },
            {
                "observation": "",
                "thought": "",
                "action": {"function": "", "arguments": {}, "status": "FINISH"},
                "result": "a b",
            },
            host("FINISH", result="files: a b"),
        ]
    )
    agent = HostAgent()
    agent.llm = llm
    agent.third_party_agents = ["LinuxAgent"]
    await run_round(context, agent, "list files")
    assert agent.status == "FINISH"
    assert "shell ls" in desk.calls
    assert context.get(ContextNames.PREVIOUS_SUBTASKS)[0] | {} == {
        "agent_name": "LinuxAgent",
        "application": "LinuxAgent",
        "subtask": "list files",
        "status": "FINISH",
        # an answer that quotes nothing of the output it rests on gets that output
        "result": "a b\nOutput:\nran ls",
    }
    assert context.get(ContextNames.LLM_CALLS) == 4
    assert agent.appagent_dict["LinuxAgent"].blackboard is agent.blackboard


async def test_unknown_target_id_keeps_the_host_in_control(context: Context, desk: Any, replay: Any) -> None:
    llm = replay([host("ASSIGN", "", {}), host("FAIL", result="nothing to do")])
    agent = HostAgent()
    agent.llm = llm
    await run_round(context, agent, "x")
    assert agent.status == "FAIL"
    first = agent.memory.content[0]
    assert first.get_value("status") == "CONTINUE" and "ASSIGN needs a target" in first.get_value("output")
    assert context.get(ContextNames.ROUND_RESULT) == "nothing to do"
