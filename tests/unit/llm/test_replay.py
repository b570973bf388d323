"""The replay provider: JSON-lines answers, response.log records, clear file errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.base import RawRequest
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


def conditional(text: str, then: object, otherwise: object) -> dict[str, object]:
    """A conditional replay line."""
    return {"$if_prompt_contains": text, "then": then, "else": otherwise}


async def test_a_conditional_line_answers_by_what_the_prompt_contains(tmp_path: Path) -> None:
    yes = {"Thought": "documented", "Status": "FINISH"}
    no = {"Thought": "guess", "Status": "CONTINUE"}
    line = json.dumps(conditional("use --frobnicate", yes, no))
    path = tmp_path / "answers.jsonl"
    path.write_text(f"{line}\n{line}\n{line}\n")
    client = ReplayClient(path)
    plain = await client.complete(
        [{"role": "system", "content": "s"}, {"role": "user", "content": "x"}], SCHEMA
    )
    # the text of a multi-part (visual) message counts too, whichever message holds it
    parts = [
        {"type": "image_url", "image_url": {"url": "data:,"}},
        {"type": "text", "text": "use --frobnicate"},
    ]
    visual = await client.complete([{"role": "user", "content": parts}], SCHEMA)
    in_system = await client.complete(
        [{"role": "system", "content": "docs: use --frobnicate here"}, {"role": "user", "content": "x"}],
        SCHEMA,
    )
    assert [plain.parsed, visual.parsed, in_system.parsed] == [no, yes, yes]


async def test_conditionals_nest_and_branches_may_be_raw_text(tmp_path: Path) -> None:
    inner = conditional("beta", {"Thought": "both", "Status": "FINISH"}, "not json at all")
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(conditional("alpha", inner, {"Thought": "none", "Status": "FAIL"})) + "\n")
    client = ReplayClient(path)
    answer = await client._raw_complete(
        RawRequest([{"role": "user", "content": "alpha only"}], None, "x", 10, 0.0)
    )
    assert answer.text == "not json at all"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"$if_prompt_contains": "", "then": "a", "else": "b"}, "must be a non-empty string"),
        ({"$if_prompt_contains": "x", "then": "a"}, "needs 'else'"),
        ({"$if_prompt_contains": "x", "then": 3, "else": "b"}, "needs 'then'"),
        ({"$if_prompt_contains": "x", "then": "a", "else": "b", "otherwise": "c"}, "not otherwise"),
        (
            {
                "$if_prompt_contains": "x",
                "then": {"$if_prompt_contains": 5, "then": "a", "else": "b"},
                "else": "b",
            },
            "must be a non-empty string",
        ),
    ],
)
def test_a_malformed_conditional_is_named_with_its_line(tmp_path: Path, line: object, problem: str) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('"fine"\n' + json.dumps(line) + "\n")
    with pytest.raises(ProviderUnavailable, match=rf"answers\.jsonl:2: .*{problem}"):
        ReplayClient(path)
