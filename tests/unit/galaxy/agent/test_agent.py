"""ConstellationAgent end to end with the replay provider, the real constellation MCP server and a
fake orchestrator."""

from __future__ import annotations

import asyncio
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
from unit.galaxy.agent.answers import (
    ADD_AFTER_COMPLETION,
    CREATE_2,
    CREATE_4,
    CYCLE_EDIT,
    ENRICH_AND_ADD,
    FINISH,
    GIVE_UP,
    NO_EDIT,
)

from starweave.agent import ContextNames
from starweave.galaxy.agent import ConstellationAgent
from starweave.galaxy.constellation import ConstellationEditor, TaskStatus
from starweave.galaxy.events import EventBus, EventType


def statuses(agent: ConstellationAgent) -> dict[str, TaskStatus]:
    assert agent.current_constellation is not None
    return {t.task_id: t.status for t in agent.current_constellation.get_all_tasks()}


async def test_creation_builds_four_tasks_over_three_devices(make_agent: AgentMaker, bus: EventBus) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent([CREATE_4], orchestrator)
    context = new_context()
    constellation, timing = await bounded(agent.process_creation(context))
    assert constellation is not None
    assert sorted(constellation.tasks) == ["t1", "t2", "t3", "t4"]
    assert {t.target_device_id for t in constellation.get_all_tasks()} == {"dev_a", "dev_b", "dev_c"}
    assert sorted(t.task_id for t in constellation.get_ready_tasks()) == ["t1", "t2"]
    assert agent.status == "CONTINUE"
    assert timing["processing_duration"] >= 0
    assert orchestrator.calls == []  # creation alone does not orchestrate


async def test_full_run_edits_batches_and_finishes(
    make_agent: AgentMaker, bus: EventBus, recorder: Recorder
) -> None:
    orchestrator = FakeOrchestrator(bus, results={"t1": "40% used", "t2": "70% used"})
    # The reference's review mode: the model reviews every batch, the last one included.
    agent = make_agent([CREATE_4, ENRICH_AND_ADD, NO_EDIT, FINISH], orchestrator, review_mode="always")
    context = new_context()
    status = await bounded(run_round(agent, context))
    assert status == "FINISH", agent.error_message
    assert agent.llm.remaining == 0  # one LLM call per batch: 1 creation + 3 edits
    assert len(orchestrator.calls) == 1
    assert orchestrator.waves == [["t1", "t2"], ["t3"], ["t4", "t5"]]
    final = agent.current_constellation
    assert final is not None
    assert final.get_task("t3").description == "Combine: dev_a uses 40%, dev_b uses 70%."
    assert final.get_task("t5").target_device_id == "dev_b"
    assert all(s is TaskStatus.COMPLETED for s in statuses(agent).values())
    modified = recorder.of(EventType.CONSTELLATION_MODIFIED)
    assert [e.data["on_task_id"] for e in modified] == [["t1", "t2"], ["t3"], ["t4", "t5"]]
    first = modified[0].data
    assert first["changes"]["added_tasks"] == ["t5"]
    assert first["changes"]["modified_tasks"] == ["t3"]
    assert first["changes"]["added_dependencies"] == ["l4"]
    assert first["old_constellation"].get_task("t5") is None
    assert {"processing_start_time", "processing_end_time", "processing_duration"} <= set(first)
    assert recorder.of(EventType.AGENT_RESPONSE) and recorder.of(EventType.AGENT_ACTION)
    assert context.get(ContextNames.ROUND_RESULT) == "Disk usage is fine everywhere."
    await bounded(agent.orchestration_task)


async def test_the_model_edits_the_constellation_the_orchestrator_runs(
    make_agent: AgentMaker, bus: EventBus, editor: ConstellationEditor
) -> None:
    orchestrator = FakeOrchestrator(bus, results={"t1": "40% used", "t2": "70% used"})
    agent = make_agent([CREATE_4, ENRICH_AND_ADD, NO_EDIT, FINISH], orchestrator, review_mode="always")
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    # One object: planned into the editor, run by the orchestrator, edited through the MCP server.
    assert agent.current_constellation is editor.constellation
    assert orchestrator.current_constellation is editor.constellation
    # The editor saw the plan once and then only the model's own edits: no copy pushed per review.
    assert editor.get_history() == [
        "Build constellation: 4 tasks, 3 dependencies",
        "Update task: t3",
        "Add task: t5",
        "Add dependency: t3 → t5",
    ]
    await bounded(agent.orchestration_task)


async def test_edit_after_completion_relaunches_orchestration(make_agent: AgentMaker, bus: EventBus) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent([CREATE_2, ADD_AFTER_COMPLETION, FINISH], orchestrator, review_mode="always")
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    assert len(orchestrator.calls) == 2
    assert orchestrator.calls[1]["tasks"] == ["t1", "t2", "t3"]
    assert orchestrator.waves == [["t1", "t2"], ["t3"]]
    assert statuses(agent)["t3"] is TaskStatus.COMPLETED


async def test_cycle_edit_is_rejected_given_back_and_the_run_continues(
    make_agent: AgentMaker, bus: EventBus, recorder: Recorder
) -> None:
    orchestrator = FakeOrchestrator(bus)
    # The refused edit goes back to the model at once (the retry answers NO_EDIT); then one
    # review per wave, as the reference does.
    answers = [CREATE_4, CYCLE_EDIT, NO_EDIT, NO_EDIT, FINISH]
    agent = make_agent(answers, orchestrator, review_mode="always")
    status = await bounded(run_round(agent, new_context()))
    assert status == "FINISH", agent.error_message
    assert agent.llm.remaining == 0
    final = agent.current_constellation
    assert final is not None
    assert final.get_dependency("l9") is None
    assert final.get_task("t3").description == "Combine 40% and 70%."  # the valid edit before it stays
    errors = recorder.of(EventType.CONSTELLATION_MODIFIED)[0].data["edit_errors"]
    assert len(errors) == 1 and "cycle" in errors[0].lower()
    assert orchestrator.waves == [["t1", "t2"], ["t3"], ["t4"]]


async def test_invalid_json_three_times_fails_clearly(make_agent: AgentMaker, bus: EventBus) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent(["not json at all", "still {not json", "```nope```"], orchestrator)
    context = new_context()
    status = await bounded(run_round(agent, context), 10)
    assert status == "FAIL"
    assert "no valid JSON answer after 3 attempts" in agent.error_message
    assert context.get(ContextNames.ERROR_MESSAGE) == agent.error_message
    assert orchestrator.calls == [] and agent.orchestration_task is None


async def test_continue_timeout_fails_instead_of_hanging(make_agent: AgentMaker, bus: EventBus) -> None:
    class StuckOrchestrator:
        async def orchestrate_constellation(self, constellation: Any, metadata: Any = None) -> dict[str, Any]:
            await asyncio.Event().wait()  # devices never answer
            return {}

    agent = make_agent([CREATE_4], StuckOrchestrator(), continue_timeout=0.3)
    status = await bounded(run_round(agent, new_context()), 10)
    assert status == "FAIL"
    assert "No task finished within 0.3 s" in agent.error_message
    task = agent.orchestration_task
    assert task is not None and not task.done()
    await bounded(agent.cancel_orchestration(), 5)
    assert task.cancelled()


async def test_orchestration_error_fails_the_agent(make_agent: AgentMaker, bus: EventBus) -> None:
    class BrokenOrchestrator:
        async def orchestrate_constellation(self, constellation: Any, metadata: Any = None) -> dict[str, Any]:
            raise ValueError("Device assignment validation failed: task t9 has no device")

    agent = make_agent([CREATE_4], BrokenOrchestrator())
    status = await bounded(run_round(agent, new_context()), 10)
    assert status == "FAIL"
    assert "orchestration stopped with an error" in agent.error_message
    assert "t9 has no device" in agent.error_message


async def test_batching_sends_all_queued_events_in_one_call(make_agent: AgentMaker, bus: EventBus) -> None:
    orchestrator = FakeOrchestrator(bus)
    agent = make_agent([CREATE_4, NO_EDIT], orchestrator, review_mode="always")
    context = new_context()
    constellation, _ = await bounded(agent.process_creation(context))
    assert constellation is not None
    live = constellation  # the orchestrator records results in the agent's own constellation
    from starweave.galaxy.events import TaskEvent

    for task_id in ("t1", "t2"):
        live.mark_task_completed(task_id, True, result=f"r-{task_id}")
        await agent.add_task_completion_event(
            TaskEvent(
                event_type=EventType.TASK_COMPLETED,
                source_id="test",
                data={"constellation": live, "constellation_id": live.constellation_id},
                task_id=task_id,
                status="completed",
            )
        )
    events = await bounded(agent.wait_for_completion_events())
    assert [e.task_id for e in events] == ["t1", "t2"]
    assert agent.task_completion_queue.empty()
    after = await bounded(agent.process_editing(context, ["t1", "t2"]))
    assert agent.llm.remaining == 0  # exactly one call for the two events
    assert after.get_task("t1").result == "r-t1"


async def test_failed_status_is_normalised_to_fail(make_agent: AgentMaker, bus: EventBus) -> None:
    orchestrator = FakeOrchestrator(bus, failing=frozenset({"t1"}))
    agent = make_agent([CREATE_4, GIVE_UP], orchestrator)
    status = await bounded(run_round(agent, new_context()))
    assert status == "FAIL"
    assert "t1 failed." in agent.error_message
    await bounded(agent.cancel_orchestration(), 5)


async def test_queue_methods_reject_wrong_events(make_agent: AgentMaker, bus: EventBus) -> None:
    from starweave.galaxy.events import ConstellationEvent, TaskEvent

    agent = make_agent([], FakeOrchestrator(bus))
    with pytest.raises(TypeError):
        await agent.add_task_completion_event(TaskEvent(event_type=EventType.TASK_STARTED, source_id="x"))
    with pytest.raises(TypeError):
        await agent.add_constellation_completion_event(
            ConstellationEvent(event_type=EventType.CONSTELLATION_STARTED, source_id="x")
        )
