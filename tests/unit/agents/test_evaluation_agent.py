"""EvaluationAgent: its response schema, the bounded trajectory text, the evaluation.log record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from starweave.agents.evaluation import (
    EvaluationAgent,
    EvaluationResponse,
    evaluation_record,
    trajectory_text,
)
from starweave.llm.providers.replay import ReplayClient

VERDICT = {
    "reason": "the file holds hello",
    "sub_scores": [{"name": "create demo/a.txt", "evaluation": "yes"}],
    "complete": "yes",
}


def step(n: int, command: str, stdout: str, status: str = "CONTINUE", **extra: Any) -> dict[str, Any]:
    return {
        "step": n,
        "thought": f"thinking {n}",
        "action": {"function": "execute_command", "arguments": {"command": command}, "status": status},
        "results": [{"status": "success", "result": {"stdout": stdout, "stderr": "", "exit_code": 0}}],
        "status": status,
        **extra,
    }


def test_schema_accepts_the_reference_shape_and_normalises_spelling() -> None:
    parsed = EvaluationResponse.model_validate(
        {"Reason": "ok", "sub_scores": [{"name": "a", "evaluation": "YES"}], "complete": True}
    )
    assert parsed.complete == "yes"
    assert parsed.sub_scores[0].evaluation == "yes"
    schema = EvaluationResponse.model_json_schema()
    assert set(schema["properties"]) == {"reason", "sub_scores", "complete"}
    assert schema["properties"]["complete"]["enum"] == ["yes", "no", "unsure"]


@pytest.mark.parametrize(
    "bad",
    [
        {"reason": "x", "sub_scores": [], "complete": "maybe"},
        {"reason": "x", "sub_scores": [{"name": "a", "evaluation": "perhaps"}], "complete": "no"},
        {
            "reason": "x",
            "sub_scores": [{"name": str(i), "evaluation": "no"} for i in range(7)],
            "complete": "no",
        },
        {"sub_scores": [], "complete": "no"},
    ],
)
def test_schema_refuses_other_verdicts_and_too_many_sub_scores(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EvaluationResponse.model_validate(bad)


def test_evaluation_record_has_the_reference_shape() -> None:
    record = evaluation_record(EvaluationResponse.model_validate(VERDICT), "write hello")
    assert list(record) == ["complete", "sub_scores", "reason", "level", "request", "type"]
    assert record == {
        "complete": "yes",
        "sub_scores": [{"name": "create demo/a.txt", "evaluation": "yes"}],
        "reason": "the file holds hello",
        "level": "session",
        "request": "write hello",
        "type": "evaluation_result",
    }


def test_trajectory_text_shows_thought_call_output_and_result() -> None:
    text = trajectory_text([step(1, "echo hi", "hi\n"), step(2, "true", "", "FINISH", result="said hi")])
    assert "Step 1 (status CONTINUE):" in text
    assert 'execute_command({"command": "echo hi"})' in text
    assert "exit code 0" in text and "    hi" in text
    assert "result: said hi" in text
    assert trajectory_text([]) == "(no steps were taken)"


def test_trajectory_text_clips_long_outputs_and_drops_the_oldest_steps() -> None:
    huge = "\n".join(f"line {i} " + "x" * 50 for i in range(2000))
    one = trajectory_text([step(1, "cat big", huge)])
    assert len(one) < 2000 and "lines cut" in one and "line 1999" in one
    many = trajectory_text([step(i, f"echo {i}", "y" * 500) for i in range(1, 60)], limit=3000)
    assert len(many) <= 3200
    assert "earlier steps left out" in many
    assert "Step 59" in many and "Step 1 " not in many


async def test_evaluate_makes_one_schema_call_with_request_outcome_and_trajectory(tmp_path: Any) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(VERDICT) + "\n")
    llm = ReplayClient(path)
    calls: list[dict[str, Any]] = []
    llm.on_call = calls.append
    agent = EvaluationAgent(llm=llm)
    verdict = await agent.evaluate(
        "write hello",
        [step(1, "echo hello > a.txt", "")],
        {"status": "FINISH", "result": "done", "agent": "LinuxAgent"},
    )
    assert verdict.complete == "yes"
    assert len(calls) == 1
    user = calls[0]["messages"][1]["content"]
    assert "Request: write hello" in user and "Final status: FINISH" in user and "Final result: done" in user
    assert "echo hello > a.txt" in user
    assert "yes|no|unsure" in calls[0]["messages"][0]["content"]


def test_the_judge_reads_what_the_workspace_holds_not_only_the_claim() -> None:
    agent = EvaluationAgent(llm=None)
    files = [{"path": "out.txt", "change": "new", "kind": "f", "size": 12, "head": "wc -l a.txt\n"}]
    outcome = {"status": "FINISH", "result": "Wrote the count into out.txt.", "files": files, "absent": []}
    user = agent.message_constructor("count the lines of a.txt into out.txt", "(steps)", outcome)[1][
        "content"
    ]
    shown = 'the workspace after the run: out.txt (new, holds "wc -l a.txt")'
    assert f"Workspace after the run (read there, not claimed): {shown}" in user
    # a run that reported no evidence says so rather than inventing any
    bare = agent.message_constructor("x", "(steps)", {"status": "FINISH"})[1]["content"]
    assert "Workspace after the run (read there, not claimed): (not read)" in bare


def test_rendering_a_step_leaves_its_record_unchanged() -> None:
    action = [{"function": "click_input", "arguments": {"id": "3"}}]
    record = {"step": 1, "action": action, "function_name": "select_app", "function_arguments": {"id": "1"}}
    text = trajectory_text([record])
    assert "click_input" in text and "select_app" in text
    assert record["action"] == [{"function": "click_input", "arguments": {"id": "3"}}]  # not extended
