"""The HostAgent's guard table: one test per guard, the request's GuardState, and GUARDS: off."""

from __future__ import annotations

import asyncio
from typing import Any

from starweave.agent import Context, ContextNames
from starweave.agent.guards import Decision, GuardState
from starweave.agents.app.agent import SubtaskOutcome
from starweave.agents.host import HostAgent
from starweave.agents.host.guards import HostStep, host_guards
from starweave.session.session import BaseRound

SUBTASK = "Compute 12 + 30 with the calculator."


def done(status: str = "FINISH", result: str = "42", acted: bool = True) -> SubtaskOutcome:
    return SubtaskOutcome(SUBTASK, status, result, acted, False)


def assign(earlier: list[SubtaskOutcome], subtask: str = SUBTASK) -> HostStep:
    return HostStep("r", "ASSIGN", "select_application_window", subtask, "calc", earlier)


async def test_every_guard_states_its_principle_in_one_line() -> None:
    lines = host_guards().principles()
    assert [line.split(":")[0] for line in lines] == ["repeat", "retry", "backed"]
    assert all("\n" not in line and len(line) < 120 for line in lines)


async def test_repeat_refuses_a_finished_subtask_once_then_ends_with_what_it_did() -> None:
    table, state = host_guards(), GuardState()
    state.begin("r")
    first = await table.judge(assign([done()]), state)
    assert first.decision is Decision.REFUSE and first.reason == "repeat"
    assert first.note.startswith(f"Not assigned: the subtask {SUBTASK!r} is done already on calc")
    state.end_step()
    again = await table.judge(assign([done()], SUBTASK.lower()), state)
    assert again.decision is Decision.FINISH and again.note.startswith("42 (the subtask")
    # A subtask that "finished" without any effect ends the request as failed instead.
    state.begin("another request")
    assert (await table.judge(assign([done(acted=False)]), state)).decision is Decision.REFUSE
    state.end_step()
    stopped = await table.judge(assign([done(acted=False)]), state)
    assert stopped.decision is Decision.STOP and "without any action taking effect" in stopped.note
    # Another subtask on the same target is handed over.
    other = await table.judge(assign([done()], "Write 42 in the editor"), state)
    assert other.allowed


async def test_retry_stops_a_subtask_that_failed_twice_on_its_target() -> None:
    table, state = host_guards(), GuardState()
    assert (await table.judge(assign([done("FAIL", "no display")]), state)).allowed
    verdict = await table.judge(assign([done("FAIL", "a"), done("FAIL", "no display")]), state)
    assert verdict.decision is Decision.STOP and verdict.reason == "retry"
    assert "failed 2 times on calc" in verdict.note and verdict.note.endswith("no display")


async def test_backed_refuses_a_finish_with_nothing_done() -> None:
    table = host_guards()
    bare = HostStep("r", "FINISH")
    verdict = await table.judge(bare, GuardState())
    assert verdict.decision is Decision.REFUSE and verdict.reason == "backed"
    finished = HostStep("r", "FINISH", records=[{"status": "FINISH"}])
    answered = HostStep("r", "FINISH", answers=1)
    launched = HostStep(
        "r", "FINISH", host_actions=[{"function": "launch_application", "result": {"status": "success"}}]
    )
    for step in (finished, answered, launched):
        assert (await table.judge(step, GuardState())).allowed


async def test_guards_off_allow_every_step() -> None:
    table, state = host_guards(enabled=False), GuardState()
    assert not table.enabled
    for step in (assign([done()]), assign([done("FAIL"), done("FAIL")]), HostStep("r", "FINISH")):
        assert (await table.judge(step, state)).allowed


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


def app(status: str, action: dict[str, Any], result: str = "") -> dict[str, Any]:
    return {"observation": "o", "thought": "t", "action": action, "status": status, "result": result}


async def test_with_guards_off_a_bare_finish_and_a_repeated_subtask_go_through(
    context: Context, desk: Any, replay: Any
) -> None:
    seven = {"function": "click_input", "arguments": {"name": "7", "id": "9"}}
    llm = replay(
        [
            host("FINISH", result="7 + 8 = 15"),  # nothing done: accepted at once with the guards off
        ]
    )
    agent = HostAgent(guards=False)
    agent.llm = llm
    async with asyncio.timeout(30):
        await BaseRound("t", context, "request", agent, 0, 20).run()
    assert agent.status == "FINISH" and len(agent.memory.content) == 1
    # The same subtask twice: handed over again (the AppAgent types 7 a second time).
    llm = replay(
        [
            host("ASSIGN", "1", "type 7 in the calculator"),
            app("FINISH", seven, "7"),
            host("ASSIGN", "1", "type 7 in the calculator"),
            app("FINISH", seven, "77"),
            host("FINISH", result="77"),
        ]
    )
    agent = HostAgent(guards=False)
    agent.llm = llm
    context.set(ContextNames.PREVIOUS_SUBTASKS, [])
    async with asyncio.timeout(30):
        await BaseRound("t", context, "request", agent, 0, 20).run()
    assert agent.status == "FINISH" and desk.windows["1"].display == "77"
    assert agent.guard_state.refusals == 0


async def test_the_counts_are_the_requests_not_the_agents(context: Context, desk: Any, replay: Any) -> None:
    llm = replay([host("FINISH", result="15"), host("FINISH", result="15")])
    agent = HostAgent()
    agent.llm = llm
    async with asyncio.timeout(30):
        await BaseRound("t", context, "request", agent, 0, 20).run()
    assert agent.guard_state.request == "request" and agent.guard_state.refusals == 1
    assert not hasattr(agent, "finish_refused") and not hasattr(agent, "warned")
