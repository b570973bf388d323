"""The ConstellationAgent's plan guards: one principle each, on the guard contract, none tied to a
verb, a phrasing or a task; a table that ``GUARDS: off`` turns off."""

from __future__ import annotations

from typing import Any

import pytest

from starweave.agent.guards import Decision, GuardState
from starweave.galaxy.agent.plan import complete_plan
from starweave.galaxy.agent.plan_guards import (
    GUARDS,
    PlanStep,
    file_names,
    plan_guards,
    plan_problems,
    request_files,
)
from starweave.galaxy.constellation import TaskConstellationSchema

DEVICES = ["dev_a", "dev_b"]


def task(task_id: str, device: str, description: str) -> dict[str, Any]:
    return {"task_id": task_id, "target_device_id": device, "description": description}


def schema(tasks: list[dict[str, Any]], deps: list[tuple[str, str]] = ()) -> TaskConstellationSchema:  # type: ignore[assignment]
    lines = [{"from_task_id": a, "to_task_id": b} for a, b in deps]
    return complete_plan(TaskConstellationSchema.model_validate({"tasks": tasks, "dependencies": lines}))


def problems(
    tasks: list[dict[str, Any]],
    deps: list[tuple[str, str]] = (),
    request: str = "",
    example: str = "",  # type: ignore[assignment]
) -> list[str]:
    return [p.text for p in plan_problems(schema(tasks, deps), DEVICES, request, example)]


def test_every_guard_states_one_principle_in_one_line() -> None:
    table = plan_guards()
    assert [g.name for g in table.guards] == [
        "repeat",
        "own_device",
        "waits_for",
        "handoff",
        "placement",
        "example",
    ]
    assert len(table.guards) == len(GUARDS)
    for line in table.principles():
        assert "\n" not in line and line.endswith(".") and len(line) < 160


def test_file_names_are_stems_with_extensions() -> None:
    assert file_names("Write 3 into out.csv, then read a-b.txt and /tmp/x.md (not 1.5 or .log).") == {
        "out.csv",
        "a-b.txt",
    }


def test_repeat_each_job_is_planned_once() -> None:
    job = "Report the kernel version of this machine."
    found = problems([task("t1", "dev_a", job), task("t2", "dev_a", job.upper()), task("t3", "dev_b", job)])
    assert found == ["task t2 repeats task t1 (the same work on dev_a); plan each job once"]


def test_own_device_a_task_names_no_other_device() -> None:
    found = problems([task("t1", "dev_a", "Copy notes.md to dev_b."), task("t2", "dev_b", "Ping dev_b-x.")])
    assert found == [
        "task t1 runs on dev_a but its description names dev_b: a task can only act on its own device; "
        "give dev_b's part its own task on dev_b"
    ]


def test_waits_for_a_task_that_mentions_another_depends_on_it() -> None:
    tasks = [task("t1", "dev_a", "Report the time."), task("t2", "dev_b", "Compare the time t1 gave.")]
    assert problems(tasks) == [
        "task t2 refers to t1 but does not depend on it; add the dependency t1 -> t2 or remove the mention"
    ]
    assert problems(tasks, [("t1", "t2")]) == []
    # Through a chain is waiting too.
    chain = [*tasks, task("t3", "dev_a", "Say what t1 and t2 found.")]
    assert problems(chain, [("t1", "t2"), ("t2", "t3")]) == []


@pytest.mark.parametrize(
    "words",
    # Whatever the verb: the file name shared with the other device's prerequisite is what counts.
    [
        "Combine the contents of {f} from both devices.",
        "Double the value stored in {f}.",
        "Take {f} and sort it.",
        "Overwrite {f} with its lines reversed.",
    ],
)
def test_handoff_a_file_named_on_another_device_before_is_out_of_reach(words: str) -> None:
    tasks = [
        task("t1", "dev_a", "Put today's date in stamp.dat."),
        task("t2", "dev_b", words.format(f="stamp.dat")),
    ]
    [found] = problems(tasks, [("t1", "t2")])
    assert found.startswith(
        "task t2 on dev_b uses stamp.dat, which t1 uses on dev_a: a device cannot read another device's files"
    )
    # Without the dependency t2 is not waiting for t1's file: two devices' own files of one name.
    assert problems(tasks) == []


def test_handoff_through_text_and_back_again_is_fine() -> None:
    # A value handed over as text, and a chain that goes back to the first device and its own file.
    tasks = [
        task("t1", "dev_a", "Write a random word into w.dat and report the word."),
        task("t2", "dev_b", "Write the word from the previous task's result into copy.dat, reversed."),
        task("t3", "dev_a", "Append the reversed word from the previous task's result to w.dat."),
    ]
    assert problems(tasks, [("t1", "t2"), ("t2", "t3")]) == []


def test_handoff_a_file_the_request_puts_on_both_devices_is_each_ones_own() -> None:
    tasks = [
        task("t1", "dev_a", "Write 42 into n.dat and report it."),
        task("t2", "dev_b", "Write the number from t1's result into n.dat."),
    ]
    both = "Write 42 into n.dat on dev_a, then write the same number into n.dat on dev_b."
    assert problems(tasks, [("t1", "t2")], both) == []
    # Without a request that says so, the shared name is a file t2 cannot see.
    assert problems(tasks, [("t1", "t2")]) != []


def test_request_files_are_placed_by_the_one_device_their_clause_names() -> None:
    request = "Read the word in in.dat on dev_a and write it into out.dat on dev_b."
    assert request_files(request, set(DEVICES)) == {"in.dat": {"dev_a"}, "out.dat": {"dev_b"}}
    assert request_files("Create x.dat on each device.", set(DEVICES)) == {}
    assert request_files("Copy x.dat from dev_a to dev_b.", set(DEVICES)) == {}  # two devices: unknown
    assert request_files("Put x.dat on dev_a; then x.dat on dev_b.", set(DEVICES)) == {
        "x.dat": {"dev_a", "dev_b"}
    }


def test_placement_a_file_the_request_puts_on_one_device_is_used_there() -> None:
    request = "Read the word in in.dat on dev_a and write it into out.dat on dev_b."
    tasks = [
        task("t1", "dev_a", "Read in.dat and write the word into out.dat."),
        task("t2", "dev_b", "Write the word from the previous task's result into out.dat."),
    ]
    assert problems(tasks, [("t1", "t2")], request) == [
        "task t1 on dev_a uses out.dat, but the request puts out.dat on dev_b: only a task on dev_b "
        "can read or write it"
    ]


def test_example_work_copied_from_the_prompt_example_is_refused() -> None:
    example = "Request: Tidy the .bak files and archive old.tgz.\nAnswer: ..."
    copied = [task("t1", "dev_a", "Delete the .bak files."), task("t2", "dev_b", "Unpack old.tgz.")]
    request = "Report the free memory of each device."
    assert problems(copied, request=request, example=example) == [
        "task t1 names .bak from the example, which the request does not mention; describe the work "
        "this request asks for",
        "task t2 names old.tgz from the example, which the request does not mention; describe the work "
        "this request asks for",
    ]
    # The same tasks are right for a request that names those files.
    assert problems(copied, request="Delete the .bak files and unpack old.tgz.", example=example) == []


def test_faults_come_first_and_alone() -> None:
    tasks = [task("t1", "dev_a", "x"), task("t2", "dev_a", "x")]
    found = plan_problems(schema(tasks, [("t1", "t2"), ("t2", "t1")]), DEVICES)
    assert found and all(p.fatal for p in found)  # the repeat is not reported on a broken DAG


async def test_the_table_refuses_once_and_guards_off_allows() -> None:
    job = "Report the kernel version of this machine."
    step = PlanStep(schema([task("t1", "dev_a", job), task("t2", "dev_a", job)]), DEVICES)
    state = GuardState()
    state.begin("r")
    first = await plan_guards().judge(step, state)
    assert first.decision is Decision.REFUSE and first.reason == "repeat" and "repeats task t1" in first.note
    state.end_step()
    assert (await plan_guards().judge(step, state)).allowed  # the model insists: the plan runs
    off = GuardState()
    off.begin("r")
    assert (await plan_guards(enabled=False).judge(step, off)).allowed
