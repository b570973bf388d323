"""Reviews of task results: refused edits given back, ids repaired, and reviews answered without the
model in review mode "fast"; replayed through the real agent and constellation MCP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from unit.galaxy.agent.agent_testkit import (
    AgentMaker,
    FakeOrchestrator,
    Recorder,
    bounded,
    new_context,
    run_round,
)
from unit.galaxy.agent.answers import CREATE_2, CREATE_4, CYCLE_EDIT, ENRICH_AND_ADD, FINISH, GIVE_UP, NO_EDIT

from starweave.agent import ContextNames
from starweave.galaxy.agent.prompter import FINAL_ANSWER_TEXT
from starweave.galaxy.agent.response import ActionCommandInfo
from starweave.galaxy.agent.review import final_answer, final_tasks, repair_edits, review_decision
from starweave.galaxy.constellation import ConstellationEditor, TaskConstellation, TaskStar
from starweave.galaxy.events import EventBus, EventType
from starweave.session.logs import JsonLinesWriter

# add_task with a taken id and a dependency on it without an id: both repaired, nothing refused.
DUPLICATE_ID = {
    "thought": "Add a check after t3.",
    "status": "CONTINUE",
    "action": [
        {
            "function": "add_task",
            "arguments": {
                "task_id": "t1",
                "description": "Check the combined figure.",
                "target_device_id": "dev_b",
            },
        },
        {"function": "add_dependency", "arguments": {"from_task_id": "t3", "to_task_id": "t1"}},
    ],
    "results": None,
}
FIX_T4 = {
    "thought": "Only update t4.",
    "status": "CONTINUE",
    "action": [
        {"function": "update_task", "arguments": {"task_id": "t4", "description": "Summarise 40% and 70%."}}
    ],
    "results": None,
}


def built(answer: dict[str, Any]) -> TaskConstellation:
    editor = ConstellationEditor()
    editor.build_constellation(answer["constellation"])
    constellation = editor.constellation
    constellation.start_execution()
    return constellation


def finish(c: TaskConstellation, task_id: str, ok: bool = True) -> None:
    c.start_task(task_id)
    c.mark_task_completed(task_id, ok, result=f"out-{task_id}" if ok else None, error=None if ok else "boom")


# ----------------------------------------------------------------------------- pure decisions
def test_always_mode_asks_after_every_result() -> None:
    c = built(CREATE_2)
    finish(c, "t1")
    assert review_decision(c, ["t1"], "always").ask_model


def test_fast_mode_skips_completed_tasks_their_dependents_get_the_results() -> None:
    c = built(CREATE_4)
    finish(c, "t1")
    finish(c, "t2")  # t3 can start now: its request carries both results
    decision = review_decision(c, ["t1", "t2"], "fast")
    assert not decision.ask_model and not decision.finish
    assert decision.reason == "task t1, t2 completed; tasks that depend on it get its result"


def chain() -> dict[str, Any]:
    """CREATE_2 with t2 after t1: the plan ends in one task."""
    answer = json.loads(json.dumps(CREATE_2))
    answer["constellation"]["dependencies"] = [
        {"line_id": "l1", "from_task_id": "t1", "to_task_id": "t2", "condition_description": "t1 done"}
    ]
    return answer


def test_fast_mode_asks_for_one_answer_when_the_plan_ends_in_several_tasks() -> None:
    # Whatever the request says: results no task has put together yet make one answer at the end.
    c = built(CREATE_2)
    finish(c, "t1")
    finish(c, "t2")
    decision = review_decision(c, ["t2"], "fast")
    assert decision.ask_model and decision.finish
    assert decision.reason == "every task completed; the results of t1, t2 make one answer"
    assert [t.task_id for t in final_tasks(c)] == ["t1", "t2"]


def test_fast_mode_asks_about_a_failure_and_an_unfinished_end() -> None:
    c = built(CREATE_2)
    finish(c, "t1", ok=False)
    assert review_decision(c, ["t1"], "fast").ask_model
    finish(c, "t2")
    decision = review_decision(c, ["t2"], "fast")  # complete, but t1 failed earlier
    assert decision.ask_model and "t1 not completed" in decision.reason


def test_fast_mode_finishes_when_every_task_completed() -> None:
    c = built(chain())  # one final task: its result is where the work arrived
    finish(c, "t1")
    finish(c, "t2")
    assert [t.task_id for t in final_tasks(c)] == ["t2"]
    decision = review_decision(c, ["t2"], "fast")
    assert decision.finish and not decision.ask_model
    assert final_answer(c) == "t1 on dev_a: out-t1\nt2 on dev_b: out-t2"


def test_final_answer_takes_the_device_agents_answer_from_a_session_result() -> None:
    c = built(CREATE_2)
    c.start_task("t1")
    session = {"task": "x", "request": "r", "status": "FINISH", "result": "42", "log_path": "/tmp/x"}
    c.mark_task_completed("t1", True, result={"task_id": "t1", "status": "completed", "result": session})
    assert final_answer(c).splitlines()[0] == "t1 on dev_a: 42"


def test_repair_gives_a_taken_task_id_the_next_free_one_and_follows_it() -> None:
    c = built(CREATE_4)
    actions = [ActionCommandInfo.model_validate(a) for a in DUPLICATE_ID["action"]]
    actions.append(ActionCommandInfo(function="update_task", arguments={"task_id": "t1", "tips": ["x"]}))
    actions, notes = repair_edits(actions, c)
    assert notes == ["add_task: task id 't1' is taken, so the new task is t5"]
    assert actions[0].arguments["task_id"] == "t5"
    assert actions[1].arguments == {"from_task_id": "t3", "to_task_id": "t5", "dependency_id": "l4"}
    assert actions[2].arguments["task_id"] == "t5"


def test_repair_names_taken_dependency_ids_and_missing_task_ids() -> None:
    c = built(CREATE_4)
    actions = [
        ActionCommandInfo(function="add_task", arguments={"description": "d", "target_device_id": "dev_a"}),
        ActionCommandInfo(
            function="add_dependency",
            arguments={"dependency_id": "l1", "from_task_id": "t4", "to_task_id": "t5"},
        ),
    ]
    _, notes = repair_edits(actions, c)
    assert notes == [
        "add_task: it had no task id, so the new task is t5",
        "add_dependency: dependency id 'l1' is taken, so it is l4",
    ]


def test_an_update_of_a_failed_task_becomes_a_redo_after_the_same_prerequisites() -> None:
    c = built(CREATE_4)
    finish(c, "t1")
    finish(c, "t2")
    finish(c, "t3", ok=False)
    update = ActionCommandInfo(
        function="update_task", arguments={"task_id": "t3", "description": "Combine again."}
    )
    actions, notes = repair_edits([update], c)
    assert notes == ["update_task: t3 already failed, so the update is a new task t5 that redoes it"]
    assert [(a.function, a.arguments) for a in actions] == [
        (
            "add_task",
            {
                "task_id": "t5",
                "description": "Combine again.",
                "target_device_id": "dev_c",
                "tips": ["Expected textual result: a short text."],
                "name": "redo of t3",
            },
        ),
        ("add_dependency", {"dependency_id": "l4", "from_task_id": "t1", "to_task_id": "t5"}),
        ("add_dependency", {"dependency_id": "l5", "from_task_id": "t2", "to_task_id": "t5"}),
    ]
    # A completed task is not redone: that update is refused and goes back to the model.
    done = ActionCommandInfo(function="update_task", arguments={"task_id": "t1", "description": "x"})
    assert repair_edits([done], c) == ([done], [])


def test_a_failed_task_is_redone_once_and_a_redo_never() -> None:
    c = built(CREATE_2)
    finish(c, "t1", ok=False)
    c.add_task(TaskStar(task_id="t3", name="redo of t1", description="again", target_device_id="dev_a"))
    finish(c, "t3", ok=False)
    for task_id in ("t1", "t3"):  # t1 was redone already; t3 is a redo
        update = ActionCommandInfo(function="update_task", arguments={"task_id": task_id, "description": "x"})
        assert repair_edits([update], c) == ([update], [])


def test_fast_mode_stops_after_too_many_failed_tasks() -> None:
    c = built(CREATE_4)
    for task_id in ("t1", "t2"):
        finish(c, task_id, ok=False)
    assert review_decision(c, ["t2"], "fast").ask_model  # two failures: still worth a review
    finish(c, "t3", ok=False)
    decision = review_decision(c, ["t3"], "fast")
    assert decision.fail and not decision.ask_model
    assert decision.reason == "3 tasks failed, so the run stops (t1: boom; t2: boom; t3: boom)"
    assert review_decision(c, ["t3"], "always").ask_model  # the reference mode reviews regardless


# ----------------------------------------------------------------------------- replayed runs
async def test_a_refused_edit_goes_back_to_the_model_with_the_reason(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent([CREATE_4, CYCLE_EDIT, FIX_T4, NO_EDIT, FINISH], orchestrator, review_mode="always")
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    review, retry = calls[1]["messages"], calls[2]["messages"]
    assert retry[: len(review)] == review  # the same prefix: only the two new turns are new
    feedback = retry[-1]["content"]
    assert "These edits were refused:" in feedback and "cycle" in feedback.lower()
    assert "t3 on dev_c PENDING (editable) after t1, t2: Combine 40% and 70%." in feedback
    final = agent.current_constellation
    assert final is not None and final.get_task("t4").description == "Summarise 40% and 70%."
    assert orchestrator.waves == [["t1", "t2"], ["t3"], ["t4"]]


def other_cycle(dependency_id: str) -> dict[str, Any]:
    arguments = {"dependency_id": dependency_id, "from_task_id": "t4", "to_task_id": "t3"}
    return {
        "thought": "t",
        "status": "CONTINUE",
        "action": [{"function": "add_dependency", "arguments": arguments}],
    }


async def test_refusals_are_retried_a_bounded_number_of_times(
    make_agent: AgentMaker, bus: EventBus, recorder: Recorder
) -> None:
    orchestrator = FakeOrchestrator(bus)
    answers = [CREATE_4, other_cycle("x1"), other_cycle("x2"), NO_EDIT, FINISH]
    agent = make_agent(answers, orchestrator, review_mode="always", edit_retries=1)
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    errors = recorder.of(EventType.CONSTELLATION_MODIFIED)[0].data["edit_errors"]
    assert len(errors) == 2 and all("cycle" in e.lower() for e in errors)
    assert agent.llm.remaining == 0  # NO_EDIT and FINISH answered the next two reviews


async def test_the_same_refused_answer_again_ends_the_retries(
    make_agent: AgentMaker, bus: EventBus, recorder: Recorder
) -> None:
    orchestrator = FakeOrchestrator(bus)
    answers = [CREATE_4, CYCLE_EDIT, CYCLE_EDIT, NO_EDIT, FINISH]
    agent = make_agent(answers, orchestrator, review_mode="always", edit_retries=2)
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    assert len(recorder.of(EventType.CONSTELLATION_MODIFIED)[0].data["edit_errors"]) == 2
    assert agent.llm.remaining == 0  # no third attempt: NO_EDIT went to the next review


async def test_a_taken_task_id_is_repaired_and_never_ends_the_run(
    make_agent: AgentMaker, bus: EventBus, recorder: Recorder, tmp_path: Path
) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent([CREATE_4, DUPLICATE_ID, NO_EDIT, FINISH], orchestrator, review_mode="always")
    context = new_context()
    context.set(ContextNames.LOGGER, JsonLinesWriter(tmp_path / "response.log", []))
    status = await bounded(run_round(agent, context))
    assert status == "FINISH", agent.error_message
    first = recorder.of(EventType.CONSTELLATION_MODIFIED)[0].data
    assert first["edit_errors"] == [] and first["changes"]["added_tasks"] == ["t5"]
    final = agent.current_constellation
    assert final is not None
    t5 = final.get_task("t5")
    assert (
        t5 is not None and t5.description == "Check the combined figure." and t5.status.value == "completed"
    )
    assert [d.from_task_id for d in final.get_task_dependencies("t5")] == ["t3"]
    steps = [json.loads(x) for x in (tmp_path / "response.log").read_text().splitlines()]
    assert steps[1]["edit_repairs"] == ["add_task: task id 't1' is taken, so the new task is t5"]
    assert orchestrator.waves == [["t1", "t2"], ["t3"], ["t4", "t5"]]


async def test_fast_mode_finishes_without_a_review_call(
    make_agent: AgentMaker, bus: EventBus, recorder: Recorder, tmp_path: Path
) -> None:
    agent = make_agent([chain()], FakeOrchestrator(bus))  # the plan is the only answer
    context = new_context("Report the uptime of both machines")
    context.set(ContextNames.LOGGER, JsonLinesWriter(tmp_path / "response.log", []))
    status = await bounded(run_round(agent, context))
    assert status == "FINISH", agent.error_message
    assert agent.llm.remaining == 0
    assert context.get(ContextNames.ROUND_RESULT) == "t1 on dev_a: output of t1\nt2 on dev_b: output of t2"
    modified = recorder.of(EventType.CONSTELLATION_MODIFIED)
    assert [e.data["on_task_id"] for e in modified] == [["t1"], ["t2"]]  # the orchestrator was released
    responses = recorder.of(EventType.AGENT_RESPONSE)
    assert responses[-1].output_data["thought"].startswith("Answered without the model: every task completed")
    steps = [json.loads(x) for x in (tmp_path / "response.log").read_text().splitlines()]
    assert steps[-1]["llm_skipped"] is True and steps[-1]["status"] == "FINISH"


async def test_fast_mode_never_reviews_completed_tasks(make_agent: AgentMaker, bus: EventBus) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent([CREATE_4], orchestrator)  # three waves, and the plan is the only answer
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    assert agent.llm.remaining == 0
    assert orchestrator.waves == [["t1", "t2"], ["t3"], ["t4"]]


async def test_a_plan_ending_in_several_tasks_gets_one_answer_only_call_at_the_end(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    final = {"thought": "3 + 4", "status": "FINISH", "action": [], "results": "7 days in total."}
    # An edit is not allowed in that call: the schema refuses it and the model is asked again.
    agent = make_agent([CREATE_2, ENRICH_AND_ADD, final], FakeOrchestrator(bus))
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    context = new_context("Report the total uptime of both machines")
    status = await bounded(run_round(agent, context))
    assert status == "FINISH", agent.error_message
    assert context.get(ContextNames.ROUND_RESULT) == "7 days in total."
    assert [c["error"] is None for c in calls] == [True, False, True]
    assert "more than 0 items" in str(calls[1]["error"])
    assert calls[2]["messages"][1]["content"].endswith(FINAL_ANSWER_TEXT)
    system = calls[2]["messages"][0]["content"]  # the short answer prompt: no tools, no edit examples
    assert system.startswith("Tasks for device agents have all completed.") and "update_task" not in system
    assert (
        "t2 on dev_b COMPLETED: Report uptime. | result: output of t2" in calls[2]["messages"][1]["content"]
    )


@pytest.mark.parametrize("mode", ["fast", "always"])
async def test_a_failed_task_is_always_reviewed(make_agent: AgentMaker, bus: EventBus, mode: str) -> None:
    orchestrator = FakeOrchestrator(bus, failing=frozenset({"t1"}))
    agent = make_agent([CREATE_2, GIVE_UP], orchestrator, review_mode=mode)
    status = await bounded(run_round(agent, new_context()))
    assert status == "FAIL" and "t1 failed." in agent.error_message
    assert agent.llm.remaining == 0
    await bounded(agent.cancel_orchestration(), 5)


async def test_an_unknown_review_mode_is_refused(make_agent: AgentMaker, bus: EventBus) -> None:
    with pytest.raises(ValueError, match="review_mode must be one of fast, always"):
        make_agent([FINISH], FakeOrchestrator(bus), review_mode="sometimes")


async def test_a_run_whose_tasks_keep_failing_stops_without_looping(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    orchestrator = FakeOrchestrator(bus, failing=frozenset({"t1", "t2", "t3"}))
    # Lines that wait for an end, not for success: t3 runs (and fails) after t1 and t2 failed.
    waits = json.loads(json.dumps(CREATE_4))
    for line in waits["constellation"]["dependencies"]:
        line["dependency_type"] = "UNCONDITIONAL"
    agent = make_agent([waits, NO_EDIT], orchestrator)
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    status = await bounded(run_round(agent, new_context()))
    assert status == "FAIL"
    assert agent.error_message.startswith("3 tasks failed, so the run stops (t1: device error;")
    assert agent.llm.remaining == 0  # one review after the first failures, none after the third
    # After a failure the review shows the redo example, not the one that updates a task.
    system = calls[1]["messages"][0]["content"]
    assert '"function":"add_task"' in system and '"function":"update_task"' not in system
    await bounded(agent.cancel_orchestration(), 5)
