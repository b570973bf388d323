"""JSON extraction from model answers and the small JSON-schema validator."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from starweave.errors import JSONExtractionError, SchemaValidationError
from starweave.llm.jsonschema import extract_json, schema_errors, schema_instruction, schema_name, validate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  \n{"a": 1}\n', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go:\n```\n{"a": [1, 2]}\n```\nDone.', {"a": [1, 2]}),
        ('Sure! {"a": {"b": {"c": 3}}} hope this helps', {"a": {"b": {"c": 3}}}),
        (
            '{"a": "has } and { inside", "b": "\\"quoted}\\""} trailing }',
            {"a": "has } and { inside", "b": '"quoted}"'},
        ),
        ('prefix {"outer": {"inner": "x"}, "n": 2} then {"second": 1}', {"outer": {"inner": "x"}, "n": 2}),
        ('{"multi": "line\ntext"}', {"multi": "line\ntext"}),
    ],
)
def test_extract_json_tolerates_wrapping(text: str, expected: dict[str, object]) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("no json here", "no JSON object"),
        ('{"a": 1', "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
        ("[1, 2, 3]", "no JSON object"),
    ],
)
def test_extract_json_rejects_invalid(text: str, fragment: str) -> None:
    with pytest.raises(JSONExtractionError, match=fragment):
        extract_json(text)


SCHEMA = {
    "type": "object",
    "properties": {
        "Status": {"type": "string", "enum": ["CONTINUE", "FINISH", "FAIL"]},
        "Arguments": {
            "type": "object",
            "properties": {"command": {"type": "string", "maxLength": 10}},
            "required": ["command"],
            "additionalProperties": False,
        },
        "Steps": {"type": "array", "items": {"type": "integer"}},
        "Note": {"type": ["string", "null"]},
    },
    "required": ["Status", "Arguments"],
    "additionalProperties": False,
}


def test_valid_object_passes() -> None:
    value = {"Status": "FINISH", "Arguments": {"command": "ls"}, "Steps": [1, 2], "Note": None}
    assert schema_errors(value, SCHEMA) == []
    assert validate(value, SCHEMA) is value


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"Arguments": {"command": "ls"}}, "missing required key 'Status'"),
        ({"Status": "DONE", "Arguments": {"command": "ls"}}, "'DONE' is not one of"),
        ({"Status": "FINISH", "Arguments": {"command": 3}}, "$.Arguments.command: expected string"),
        ({"Status": "FINISH", "Arguments": {"command": "ls", "x": 1}}, "unexpected key 'x'"),
        ({"Status": "FINISH", "Arguments": {"command": "ls"}, "Extra": 1}, "unexpected key 'Extra'"),
        (
            {"Status": "FINISH", "Arguments": {"command": "ls"}, "Steps": [1, "2"]},
            "$.Steps[1]: expected integer",
        ),
        (
            {"Status": "FINISH", "Arguments": {"command": "ls"}, "Steps": [True]},
            "$.Steps[0]: expected integer",
        ),
        ({"Status": "FINISH", "Arguments": {"command": "x" * 11}}, "longer than 10"),
        ({"Status": "FINISH", "Arguments": {"command": "ls"}, "Note": 5}, "expected string or null"),
    ],
)
def test_invalid_object_reports_path(value: dict[str, object], fragment: str) -> None:
    with pytest.raises(SchemaValidationError) as info:
        validate(value, SCHEMA)
    assert fragment in str(info.value)


def test_additional_properties_schema_and_refs() -> None:
    schema = {
        "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}},
        "type": "object",
        "additionalProperties": {"$ref": "#/$defs/Item"},
    }
    assert schema_errors({"a": {"n": 1.5}, "b": {"n": 2}}, schema) == []
    assert schema_errors({"a": {"m": 1}}, schema) == ["$.a: missing required key 'n'"]


def test_any_of() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert schema_errors("x", schema) == []
    assert schema_errors(3, schema) == []
    assert schema_errors(3.5, schema) == ["$: matches none of the anyOf alternatives"]


class Decision(BaseModel):
    """A tiny agent decision."""

    thought: str
    status: str = "CONTINUE"


def test_pydantic_schema_validates_and_fills_defaults() -> None:
    assert validate({"thought": "t"}, Decision) == {"thought": "t", "status": "CONTINUE"}
    with pytest.raises(SchemaValidationError, match="thought"):
        validate({"status": "FINISH"}, Decision)


def test_schema_name_is_openai_safe() -> None:
    assert schema_name(Decision) == "Decision"
    assert schema_name({"title": "My schema!"}) == "My_schema_"
    assert schema_name({}) == "response"


def test_schema_instruction_with_and_without_the_schema() -> None:
    schema = {"type": "object", "required": ["a"], "description": "é"}
    full = schema_instruction(schema)
    assert "exactly one JSON object" in full and full.endswith(
        '{"type": "object", "required": ["a"], "description": "é"}'
    )
    short = schema_instruction(None)
    assert "exactly one JSON object" in short and '"required"' not in short and "{" not in short
