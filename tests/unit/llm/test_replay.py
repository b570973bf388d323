"""The replay provider: JSON-lines answers, response.log records, clear file errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.providers.replay import ReplayClient, select_fields

SCHEMA = {
    "type": "object",
    "properties": {
        "Observation": {"type": "string"},
        "Thought": {"type": "string"},
        "ControlLabel": {"type": "string"},
        "Status": {"type": "string"},
    },
    "required": ["Thought", "Status"],
    "additionalProperties": False,
}


async def test_answers_come_back_in_order_then_run_out(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"Thought": "a", "Status": "CONTINUE"}\n\n{"Thought": "b", "Status": "FINISH"}\n')
    client = ReplayClient(path)
    first = await client.complete([{"role": "user", "content": "x"}], SCHEMA)
    second = await client.complete([{"role": "user", "content": "x"}], SCHEMA)
    assert [first.parsed, second.parsed] == [
        {"Thought": "a", "Status": "CONTINUE"},
        {"Thought": "b", "Status": "FINISH"},
    ]
    with pytest.raises(LLMError, match=r"answers\.jsonl: the replay file had 2 answers"):
        await client.complete([{"role": "user", "content": "x"}], SCHEMA)


async def test_response_log_records_keep_only_schema_fields(tmp_path: Path) -> None:
    record = {
        "observation": "a terminal",
        "thought": "list files",
        "control_label": "3",
        "status": "CONTINUE",
        "step": 1,
        "cost": 0.01,
        "time_cost": {"LLM_INTERACTION": 4.2},
        "agent_type": "AppAgent",
    }
    path = tmp_path / "response.log"
    path.write_text(json.dumps(record) + "\n")
    completion = await ReplayClient(path).complete([{"role": "user", "content": "x"}], SCHEMA)
    assert completion.parsed == {
        "Observation": "a terminal",
        "Thought": "list files",
        "ControlLabel": "3",
        "Status": "CONTINUE",
    }
    assert json.loads(completion.text) == completion.parsed


def test_select_fields_without_schema_keeps_everything() -> None:
    assert select_fields({"a": 1, "b": 2}, None) == {"a": 1, "b": 2}
    assert select_fields({"a": 1, "b": 2}, {"type": "object"}) == {"a": 1, "b": 2}
    assert select_fields({"a": 1, "b": 2}, {"properties": {"a": {}}}) == {"a": 1}


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProviderUnavailable, match=r"nothere\.jsonl: replay file not found"):
        ReplayClient(tmp_path / "nothere.jsonl")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"a": 1}\n{"a": \n', r"bad\.jsonl:2: not valid JSON"),
        ('{"a": 1}\n\n[1, 2]\n', r"bad\.jsonl:3: expected a JSON object"),
    ],
)
def test_bad_line_is_named(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ProviderUnavailable, match=fragment):
        ReplayClient(path)
