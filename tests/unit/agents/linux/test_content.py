"""Writes of an arithmetic expression where its value was meant (starweave/agents/linux/content.py)."""

from __future__ import annotations

import pytest

from starweave.agents.linux.content import expression_note, expression_value, written_expression


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("21*2", "42"),
        (" 21 * 2 ", "42"),
        ("3+4+5", "12"),
        ("7/2", "3.5"),
        ("10/3", "3.333333"),
        ("(2+3)*4", "20"),
        ("6x7", "42"),
        ("-5+2", "-3"),
        ("100 - 58", "42"),
    ],
)
def test_an_expression_has_its_value(text: str, value: str) -> None:
    assert expression_value(text) == value


@pytest.mark.parametrize(
    "text", ["42", "hello", "2024-01-02", "21*", "1/0", "v1.2", "a*b", "9" * 40 + "*" + "9" * 40, ""]
)
def test_what_is_not_an_expression_has_no_value(text: str) -> None:
    assert expression_value(text) is None


def test_a_write_of_only_an_expression_is_found_in_write_file_and_echo() -> None:
    assert written_expression("write_file", {"path": "double.txt", "content": "21*2"}) == ("21*2", "42")
    assert written_expression("execute_command", {"command": "echo 21*2 > double.txt"}) == ("21*2", "42")
    assert written_expression("execute_command", {"command": "echo '3 + 4' >> sum.txt"}) == ("3 + 4", "7")
    # Text around the expression, a command that computes, or no file: nothing to say.
    assert written_expression("write_file", {"path": "n.txt", "content": "total: 21*2"}) is None
    assert written_expression("execute_command", {"command": "python3 -c 'print(21*2)' > d.txt"}) is None
    assert written_expression("execute_command", {"command": "echo 21*2"}) is None
    assert written_expression("read_file", {"path": "21*2"}) is None


def test_the_note_gives_the_value() -> None:
    note = expression_note("21*2", "42")
    assert "21*2" in note and "Its value is 42" in note
