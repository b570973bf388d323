"""Counting files with a command that counts something else (agents/linux/counting.py)."""

from __future__ import annotations

import pytest

from starweave.agents.linux.counting import miscounted_files

REQUEST = "Count the files in the workspace."


@pytest.mark.parametrize(
    ("command", "output", "files", "instead"),
    [
        ("ls -l | wc -l", "1", 0, "ls | wc -l"),
        ("ls -al | wc -l", "5", 2, "ls -A | wc -l"),
        ("ls -l -A docs | wc -l", "3", 2, "ls -A docs | wc -l"),
    ],
)
def test_a_long_listing_counts_its_total_line(command: str, output: str, files: int, instead: str) -> None:
    note = miscounted_files(REQUEST, command, output, ran_call=True)
    assert f"the number of files is {files}." in note and note.endswith(f"{instead}")


@pytest.mark.parametrize(
    "command",
    [
        "ls | wc -l",
        "ls -1 | wc -l",
        "ls -ld docs | wc -l",
        "ls -l *.txt | wc -l",
        "ls -l a.txt | wc -l",
        "ls -l",
    ],
)
def test_listings_without_a_total_line_pass(command: str) -> None:
    assert miscounted_files(REQUEST, command, "3", ran_call=True) == ""


def test_a_request_about_lines_is_not_a_file_count() -> None:
    assert miscounted_files("Count the lines of the files.", "ls -l | wc -l", "1", ran_call=True) == ""


def test_an_unreadable_count_still_names_the_extra_line() -> None:
    note = miscounted_files(REQUEST, "ls -l | wc -l", "", ran_call=False)
    assert "counts the total line besides the files" in note


def test_wc_on_files_is_checked_only_after_the_call() -> None:
    output = "1 a.txt\n2 b.txt\n3 total"
    assert miscounted_files(REQUEST, "wc -l *.txt", output, ran_call=True) == ""
    assert "Its output lists 2 file(s)" in miscounted_files(REQUEST, "wc -l *.txt", output, ran_call=False)
