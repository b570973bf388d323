"""The short creation answer, its completion into a full plan, the plan's faults and its way back
to the model; replayed through the real agent and constellation MCP server. The plan guards have
their own tests (test_plan_guards.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from unit.galaxy.agent.agent_testkit import AgentMaker, FakeOrchestrator, bounded, new_context, run_round
from unit.galaxy.agent.answers import CREATE_4

from starweave.agent import ContextNames
from starweave.galaxy.agent import ConstellationPrompterFactory, creation_json_schema
from starweave.galaxy.agent.plan import complete_plan
from starweave.galaxy.agent.plan_guards import plan_problems
from starweave.galaxy.constellation import TaskConstellationSchema
from starweave.galaxy.constellation.enums import DependencyType
from starweave.galaxy.events import EventBus
from starweave.llm import schema_errors
from starweave.session.logs import JsonLinesWriter

DEVICES = ["dev_a", "dev_b"]


def short_task(task_id: str, device: str, description: str) -> dict[str, Any]:
    """A task as the small model writes it: only what it must decide."""
    return {"task_id": task_id, "target_device_id": device, "description": description}


def plan(tasks: list[dict[str, Any]], deps: list[tuple[str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    lines = [{"from_task_id": a, "to_task_id": b} for a, b in deps]
    return {
        "thought": "plan",
        "status": "CONTINUE",
        "constellation": {"tasks": tasks, "dependencies": lines},
    }


HELLO = "Create a file named hello.txt containing the word hello."
SAME_JOB = plan([short_task("t1", "dev_a", HELLO), short_task("t2", "dev_b", HELLO)])
# What the old prompt made the 1.5B model write: a third task that reads the other device's file.
COMBINE = plan(
    [
        short_task("t1", "dev_a", HELLO),
        short_task("t2", "dev_b", HELLO),
        short_task("t3", "dev_a", "Combine the contents of hello.txt from both devices."),
    ],
    [("t1", "t3"), ("t2", "t3")],
)


def schema_of(answer: dict[str, Any]) -> TaskConstellationSchema:
    return TaskConstellationSchema.model_validate(answer["constellation"])


def problems_of(answer: dict[str, Any]) -> list[str]:
    return [p.text for p in plan_problems(complete_plan(schema_of(answer)), DEVICES)]


def test_the_short_answer_matches_the_schema_and_so_does_the_full_one() -> None:
    schema = creation_json_schema(DEVICES)
    assert schema_errors(SAME_JOB, schema) == []
    assert schema_errors(CREATE_4, creation_json_schema(["dev_a", "dev_b", "dev_c"])) == []
    task = schema["properties"]["constellation"]["anyOf"][0]["properties"]["tasks"]["items"]
    assert task["required"] == ["task_id", "target_device_id", "description"]
    assert schema["properties"]["thought"]["maxLength"] == 200
    too_long = {**SAME_JOB, "thought": "x" * 201}
    assert schema_errors(too_long, schema)


def test_complete_plan_fills_names_line_ids_and_conditions() -> None:
    answer = plan(
        [
            short_task("t1", "dev_a", "Read port.txt and report the number in it."),
            short_task("t2", "dev_b", "x"),
        ],
        [("t1", "t2")],
    )
    full = complete_plan(schema_of(answer))
    assert full.tasks["t1"].name == "Read port.txt and report the number in it"
    assert list(full.dependencies) == ["l1"]
    line = full.dependencies["l1"]
    assert (line.from_task_id, line.to_task_id, line.condition_description) == ("t1", "t2", "t1 succeeded")
    # t2 receives t1's result: after a failure of t1 it is cancelled, not run on missing data.
    assert line.dependency_type == DependencyType.SUCCESS_ONLY.name
    # The reference's full shape keeps what it says.
    kept = complete_plan(schema_of(CREATE_4))
    assert kept.tasks["t3"].name == "step t3" and list(kept.dependencies) == ["l1", "l2", "l3"]
    assert kept.dependencies["l1"].condition_description == "t1 done"
    assert kept.dependencies["l1"].dependency_type == DependencyType.SUCCESS_ONLY.name
    typed = plan([short_task("t1", "dev_a", "a"), short_task("t2", "dev_b", "b")], [("t1", "t2")])
    typed["constellation"]["dependencies"][0]["dependency_type"] = "unconditional"
    line = complete_plan(schema_of(typed)).dependencies["l1"]
    assert (line.dependency_type, line.condition_description) == ("UNCONDITIONAL", "t1 finished")


def test_a_long_description_gives_a_short_name() -> None:
    long = "Count every file whose name ends in .txt under the current directory, recursively, and report it."
    name = complete_plan(schema_of(plan([short_task("t1", "dev_a", long)]))).tasks["t1"].name
    assert name.endswith("…") and len(name) <= 61 and name.startswith("Count every file")


@pytest.mark.parametrize(
    ("deps", "expected"),
    [
        ([("t1", "t9")], "dependency t1 -> t9 names no task t9"),
        ([("t1", "t2"), ("t2", "t1")], "the dependencies form a cycle"),
        ([("t1", "t1")], "task t1 depends on itself"),
    ],
)
def test_structural_faults_are_fatal(deps: list[tuple[str, str]], expected: str) -> None:
    answer = plan([short_task("t1", "dev_a", "a"), short_task("t2", "dev_b", "b")], deps)
    problems = plan_problems(complete_plan(schema_of(answer)), DEVICES)
    assert problems and all(p.fatal for p in problems)
    assert any(expected in p.text for p in problems), problems


def test_an_unknown_device_is_fatal_and_named() -> None:
    problems = plan_problems(complete_plan(schema_of(plan([short_task("t1", "ghost", "a")]))), DEVICES)
    assert problems[0].fatal and "'ghost', which is not an available device (use one of: dev_a, dev_b)" in (
        problems[0].text
    )


def test_examples_without_a_shape_are_all_shown(tmp_path: Path) -> None:
    examples = tmp_path / "examples.yaml"
    examples.write_text(
        "example1:\n  Request: r1\n  Response: {thought: a}\n"
        "example2:\n  Request: r2\n  Response: {thought: b}\n"
    )
    prompter = ConstellationPrompterFactory.create_prompter("creation", None, examples)
    text = prompter.examples_prompt_helper()
    assert "Request: r1" in text and "Request: r2" in text and 'Answer: {"thought":"b"}' in text


async def test_a_short_answer_becomes_a_full_constellation(make_agent: AgentMaker, bus: EventBus) -> None:
    agent = make_agent([SAME_JOB], FakeOrchestrator(bus))
    constellation, _ = await bounded(agent.process_creation(new_context("Create hello.txt on each device.")))
    assert constellation is not None
    t1 = constellation.get_task("t1")
    assert t1 is not None and t1.name == "Create a file named hello.txt containing the word hello"
    assert t1.target_device_id == "dev_a" and t1.status.value == "pending"
    assert constellation.validate_dag() == (True, [])


async def test_a_plan_that_cannot_work_goes_back_to_the_model(make_agent: AgentMaker, bus: EventBus) -> None:
    agent = make_agent([COMBINE, SAME_JOB], FakeOrchestrator(bus))
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    constellation, _ = await bounded(agent.process_creation(new_context("Create hello.txt on each device.")))
    assert constellation is not None and sorted(constellation.tasks) == ["t1", "t2"]
    assert len(calls) == 2
    first, second = calls[0]["messages"], calls[1]["messages"]
    # The model does not see its refused plan again (it would copy it): the first prompt is asked
    # again with the reason as a note at its end, so the cached system prompt is reused.
    assert len(second) == len(first) == 2 and second[0] == first[0]
    assert second[1]["content"].startswith(first[1]["content"] + "\nNote: a plan was refused because ")
    assert "t3 on dev_a uses hello.txt, which t2 uses on dev_b" in second[1]["content"]


async def test_a_plan_that_still_cannot_be_built_fails_with_its_reason(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    cyclic = plan(
        [short_task("t1", "dev_a", "a"), short_task("t2", "dev_b", "b")], [("t1", "t2"), ("t2", "t1")]
    )
    agent = make_agent([cyclic, cyclic, cyclic], FakeOrchestrator(bus))
    status = await bounded(run_round(agent, new_context()))
    assert status == "FAIL"
    assert "plan could not be used after 3 attempts" in agent.error_message
    assert "cycle" in agent.error_message


async def test_a_plan_the_model_insists_on_runs_despite_the_guards(
    make_agent: AgentMaker, bus: EventBus, tmp_path: Path
) -> None:
    # The plan guards are heuristics on the guard contract: a plan is refused once, and the model's
    # next plan runs even if a guard still objects; what it objects to is logged as a warning.
    agent = make_agent([COMBINE, COMBINE, COMBINE], FakeOrchestrator(bus))
    context = new_context()
    context.set(ContextNames.LOGGER, JsonLinesWriter(tmp_path / "response.log", []))
    constellation, _ = await bounded(agent.process_creation(context))
    assert constellation is not None and constellation.task_count == 3
    assert agent.llm.remaining == 1
    [step] = [json.loads(x) for x in (tmp_path / "response.log").read_text().splitlines()]
    assert any("t3 on dev_a uses hello.txt" in w for w in step["plan_warnings"])


async def test_with_guards_off_a_plan_runs_as_the_model_wrote_it(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    agent = make_agent([COMBINE, SAME_JOB], FakeOrchestrator(bus), guards=False)
    assert not agent.plan_guards.enabled
    constellation, _ = await bounded(agent.process_creation(new_context("Create hello.txt on each device.")))
    assert constellation is not None and constellation.task_count == 3  # not refused: COMBINE runs
    assert agent.llm.remaining == 1


async def test_with_guards_off_a_plan_that_cannot_be_built_is_still_refused(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    cyclic = plan(
        [short_task("t1", "dev_a", "a"), short_task("t2", "dev_b", "b")], [("t1", "t2"), ("t2", "t1")]
    )
    agent = make_agent([cyclic, SAME_JOB], FakeOrchestrator(bus), guards=False)
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    constellation, _ = await bounded(agent.process_creation(new_context()))
    assert constellation is not None and sorted(constellation.tasks) == ["t1", "t2"]
    assert "the dependencies form a cycle" in calls[1]["messages"][1]["content"]
