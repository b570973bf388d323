"""Response model, status normalisation, JSON schemas and prompts of the ConstellationAgent."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from unit.galaxy.agent.agent_testkit import DEVICES
from unit.galaxy.agent.answers import CREATE_4, ENRICH_AND_ADD

from starweave.galaxy.agent import (
    ConstellationAgentResponse,
    ConstellationPrompterFactory,
    WeavingMode,
    creation_json_schema,
    editing_json_schema,
    format_device_info,
    normalise_status,
)
from starweave.galaxy.constellation import ConstellationEditor, TaskConstellationSchema
from starweave.llm import schema_errors

# Every prompt token costs the embedded model about 25 ms on one core (spec: embedded-llm.md), at
# roughly 3.7 characters per token: creation ~550 tokens, editing ~800 with its tools.
CREATION_BUDGET_CHARS = 2100
EDITING_BUDGET_CHARS = 3200


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("FAILED", "FAIL"),
        ("failed", "FAIL"),
        ("continue", "CONTINUE"),
        ("Finish", "FINISH"),
        ("START", "START"),
    ],
)
def test_status_normalisation(raw: str, expected: str) -> None:
    assert normalise_status(raw) == expected


def test_unknown_status_is_refused() -> None:
    with pytest.raises(ValueError, match="status must be one of"):
        normalise_status("MAYBE")


def test_response_requires_thought_and_status() -> None:
    with pytest.raises(ValidationError, match="thought"):
        ConstellationAgentResponse.model_validate({"thought": " ", "status": "CONTINUE"})
    with pytest.raises(ValidationError, match="status"):
        ConstellationAgentResponse.model_validate({"thought": "x", "status": ""})


def test_recorded_answers_match_the_schemas() -> None:
    ids = [d["device_id"] for d in DEVICES[:3]]
    assert schema_errors(CREATE_4, creation_json_schema(ids)) == []
    tools = [{"name": "update_task", "input_schema": {"properties": {"task_id": {"type": "string"}}}}]
    bad = dict(ENRICH_AND_ADD)
    assert schema_errors(bad, editing_json_schema(tools))  # add_task is not an offered tool
    parsed = ConstellationAgentResponse.model_validate(CREATE_4)
    assert isinstance(parsed.constellation, TaskConstellationSchema)
    assert sorted(parsed.constellation.tasks) == ["t1", "t2", "t3", "t4"]


def test_creation_schema_limits_devices() -> None:
    schema = creation_json_schema(["dev_a"])
    answer = {**CREATE_4}
    errors = schema_errors(answer, schema)
    assert errors and "constellation" in errors[0]  # dev_b and dev_c are not allowed targets
    assert schema_errors(answer, creation_json_schema(["dev_a", "dev_b", "dev_c"])) == []


def test_device_info_skips_disconnected_devices() -> None:
    text = format_device_info(DEVICES)
    assert "- dev_c (os: linux; shell, python)" in text and "dev_a" in text
    assert "dev_gone" not in text
    assert "busy" not in text  # a line that changes between calls would cost the cached prefix
    assert format_device_info([]) == "No devices available."


def test_creation_prompt_shows_request_devices_and_fits_the_budget() -> None:
    prompter = ConstellationPrompterFactory.create_prompter("creation")
    system = prompter.system_prompt_construction("Check disk usage everywhere")
    user = prompter.user_prompt_construction("Check disk usage everywhere", DEVICES)
    assert "Check disk usage everywhere" in user and "- dev_b (os: linux; shell)" in user
    assert "Answer: {" in system
    assert len(system) + len(user) < CREATION_BUDGET_CHARS


def test_editing_prompt_shows_results_and_tools_without_build() -> None:
    editor = ConstellationEditor()
    editor.build_constellation(CREATE_4["constellation"])
    c = editor.constellation
    c.start_execution()
    c.mark_task_completed("t1", True, result="dev_a: 40% used")
    prompter = ConstellationPrompterFactory.create_prompter(WeavingMode.EDITING)
    tools = [
        {"tool_name": "build_constellation", "description": "bulk", "input_schema": {}},
        {"tool_name": "update_task", "description": "Change a task.", "input_schema": {"properties": {}}},
    ]
    prompter.create_api_prompt_template(tools)
    system = prompter.system_prompt_construction("Check disk usage")
    user = prompter.user_prompt_construction("Check disk usage", DEVICES, c)
    assert "update_task" in system and "build_constellation" not in system
    assert "t1 on dev_a COMPLETED: Report the disk usage of / with df -h. | result: dev_a: 40% used" in user
    assert "t3 on dev_c WAITING_DEPENDENCY (editable) after t1, t2: Combine" in user
    assert user.endswith("Next free task id: t5")
    # Stable first: devices and request before the tasks, which change on every call.
    assert user.index("Devices:") < user.index("Request:") < user.index("Tasks:")
    assert len(system) + len(user) < EDITING_BUDGET_CHARS


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="Unsupported mode"):
        ConstellationPrompterFactory.create_prompter("weaving")


def test_build_constellation_round_trips_an_executing_dag() -> None:
    editor = ConstellationEditor()
    editor.build_constellation(CREATE_4["constellation"])
    c = editor.constellation
    c.start_execution()
    for task_id in ("t1", "t2", "t3"):
        c.mark_task_completed(task_id, True, result=f"r-{task_id}")
    mirror = ConstellationEditor()
    mirror.build_constellation(c.to_basemodel(), clear_existing=True)
    mirrored = mirror.constellation.get_task("t3")
    assert mirrored is not None and mirrored.status.value == "completed" and mirrored.result == "r-t3"
