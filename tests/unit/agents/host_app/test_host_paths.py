"""HostAgent FAIL / ERROR / CONFIRM / PENDING paths and an AppAgent error returning to the host."""

from __future__ import annotations

import asyncio
from typing import Any

from starweave.agent import Context, ContextNames
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


async def run(context: Context, agent: HostAgent, max_step: int = 20) -> BaseRound:
    round_ = BaseRound("t", context, "request", agent, 0, max_step)
    async with asyncio.timeout(30):
        await round_.run()
    return round_


async def test_host_fail_ends_the_round(context: Context, replay: Any) -> None:
    agent = HostAgent()
    agent.llm = replay([host("FAIL", result="cannot")])
    await run(context, agent)
    assert agent.status == "FAIL" and context.get(ContextNames.ROUND_RESULT) == "cannot"


async def test_app_error_returns_to_host_error(context: Context, desk: Any, replay: Any) -> None:
    agent = HostAgent()
    agent.llm = replay([host("ASSIGN", "select_application_window", {"id": "1"}), "garbage", "garbage"])
    round_ = await run(context, agent)
    assert round_.agent is agent and agent.status == "ERROR"
    assert context.get(ContextNames.PREVIOUS_SUBTASKS)[0]["status"] == "ERROR"


async def test_host_confirm_close_application(context: Context, desk: Any, replay: Any) -> None:
    answers = [host("CONTINUE", "close_application", {"id": "2"}), host("FINISH", result="closed")]
    refused = HostAgent()
    refused.llm = replay(answers)
    await run(context, refused)
    assert refused.status == "FAIL" and "2" in desk.windows

    approved = HostAgent()
    approved.llm = replay(answers)

    async def yes(action: str, reason: str) -> bool:
        return "closes" in reason

    approved.confirmer = yes
    context.set(ContextNames.SESSION_STEP, 0)
    await run(context, approved)
    assert approved.status == "FINISH" and "2" not in desk.windows


async def test_host_pending_asks_and_records_the_answer(context: Context, replay: Any) -> None:
    agent = HostAgent()
    agent.llm = replay([host("PENDING", questions=["Which file?"]), host("FINISH", result="ok")])

    async def answer(question: str) -> str:
        return "notes.txt"

    agent.asker = answer
    await run(context, agent)
    assert agent.status == "FINISH"
    assert agent.blackboard.questions.to_list_of_dicts() == [
        {"question": "Which file?", "answer": "notes.txt"}
    ]


async def test_step_cap_stops_a_looping_host(context: Context, replay: Any) -> None:
    agent = HostAgent()
    agent.llm = replay([host("CONTINUE")] * 3)
    round_ = await run(context, agent, max_step=3)
    assert round_.stopped_by_cap and agent.status == "FAIL"
