"""The planner may state what a task needs of its device (``device_type``, ``required_capabilities``):
the prompt and answer schema offer both, the answer is parsed and checked against the device it
names, and assignment honours it. Replayed through the real agent, constellation MCP server and
orchestrator."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import ValidationError
from unit.galaxy.agent.agent_testkit import AgentMaker, FakeOrchestrator, bounded, new_context, run_round
from unit.galaxy.orchestrator.orch_kit import FakeDevices

from starweave.galaxy.agent import ConstellationPrompterFactory, creation_json_schema
from starweave.galaxy.constellation import DeviceType, TaskConstellationSchema
from starweave.galaxy.devices.profile import AgentProfile
from starweave.galaxy.events import EventBus
from starweave.galaxy.orchestrator import TaskConstellationOrchestrator
from starweave.llm import schema_errors


def answer(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"thought": "t", "status": "CONTINUE", "constellation": {"tasks": list(tasks), "dependencies": []}}


def needs(task_id: str, device: str, **stated: Any) -> dict[str, Any]:
    return {"task_id": task_id, "target_device_id": device, "description": f"job {task_id}", **stated}


def test_the_prompt_and_schema_offer_the_requirement_fields() -> None:
    system = ConstellationPrompterFactory.create_prompter("creation").system_prompt_construction("x")
    assert '"required_capabilities": [<words from its device\'s line that it needs' in system
    schema = creation_json_schema(["dev_a"])
    good = answer(needs("t1", "dev_a", device_type="linux", required_capabilities=["python"]))
    assert schema_errors(good, schema) == []
    assert schema_errors(answer(needs("t1", "dev_a", device_type="toaster")), schema) != []


async def test_a_task_on_a_device_without_its_capability_goes_back_to_the_model(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    wrong = answer(needs("t1", "dev_b", required_capabilities=["Python"]), needs("t2", "dev_a"))
    right = answer(needs("t1", "dev_c", required_capabilities=["python"], device_type="linux"))
    agent = make_agent([wrong, right], FakeOrchestrator(bus))
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    constellation, _ = await bounded(agent.process_creation(new_context("Run the script")))
    assert len(calls) == 2
    assert (
        "Note: a plan was refused because task t1 needs capability 'python', which dev_b lacks; "
        "put it on dev_c" in calls[1]["messages"][1]["content"]
    )
    assert constellation is not None
    t1 = constellation.get_task("t1")
    assert t1 is not None and t1.target_device_id == "dev_c"
    assert t1.device_type is DeviceType.LINUX and t1.task_data == {"required_capabilities": ["python"]}


async def test_unknown_values_are_refused_with_a_clear_reason(make_agent: AgentMaker, bus: EventBus) -> None:
    unknown_kind = answer(needs("t1", "dev_a", device_type="toaster"))
    nobody_has = answer(needs("t1", "dev_a", required_capabilities=["teleport"]))
    bad_words = answer(needs("t1", "dev_a", required_capabilities=[3]))
    agent = make_agent([unknown_kind, bad_words, nobody_has, nobody_has, nobody_has], FakeOrchestrator(bus))
    calls: list[dict[str, Any]] = []
    agent.llm.on_call = calls.append
    assert await bounded(run_round(agent, new_context("Do it"))) == "FAIL"
    replies = [c["messages"][-1]["content"] for c in calls[1:]]
    # The answer schema refuses the first two (a constrained model cannot write them at all) ...
    assert all(r.startswith("Your previous answer could not be used: $.constellation") for r in replies[:2])
    # ... and the parser names the accepted values where no schema constrained the writer (MCP, files).
    with pytest.raises(
        ValidationError, match="unknown device_type 'toaster'; use one of windows, macos, linux"
    ):
        TaskConstellationSchema.model_validate(unknown_kind["constellation"])
    with pytest.raises(ValidationError, match=re.escape('capability words (e.g. ["gui"]), got [3]')):
        TaskConstellationSchema.model_validate(bad_words["constellation"])
    assert "plan could not be used after 3 attempts" in agent.error_message
    assert (
        "task t1 needs capability 'teleport', which dev_a lacks; no device has that: drop the "
        "requirement if the task can do without it, or answer FAIL"
    ) in agent.error_message


@dataclass
class CapableDevices(FakeDevices):
    """FakeDevices whose profiles carry capabilities."""

    capabilities: dict[str, list[str]] = field(default_factory=dict)

    def get_device_info(self, device_id: str) -> AgentProfile | None:
        profile = super().get_device_info(device_id)
        if profile is not None:
            profile.capabilities = list(self.capabilities.get(device_id, []))
        return profile


async def test_the_orchestrator_honours_the_plans_requirement_and_the_callers_choice(
    make_agent: AgentMaker, bus: EventBus
) -> None:
    plan = answer(
        needs("t1", "dev_c", required_capabilities=["python"]),
        needs("t2", "dev_b", device_type="linux"),
        needs("t3", "dev_c", required_capabilities=["python"]),
    )
    agent = make_agent([plan], FakeOrchestrator(bus))
    constellation, _ = await bounded(agent.process_creation(new_context("Do it")))
    assert constellation is not None
    devices = CapableDevices(
        devices={"dev_a": "linux", "dev_b": "linux", "dev_c": "linux"},
        capabilities={"dev_a": ["shell"], "dev_b": ["shell"], "dev_c": ["shell", "python"]},
    )
    orchestrator = TaskConstellationOrchestrator(devices, EventBus())
    # t1's planned device has gone since (the strategy finds the one with python); the caller's
    # assignment of t3 wins over its requirement; t2 stays where the plan put it.
    constellation.get_task("t1").target_device_id = "gone"  # type: ignore[union-attr]
    await bounded(
        orchestrator.orchestrate_constellation(
            constellation, device_assignments={"t3": "dev_b"}, assignment_strategy="capability_match"
        )
    )
    assert {call.task_id: call.device_id for call in devices.calls} == {
        "t1": "dev_c",
        "t2": "dev_b",
        "t3": "dev_b",
    }
