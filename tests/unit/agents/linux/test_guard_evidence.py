"""The grounding guards' pure parts: which facts of a result were never seen, which failures are errors."""

from __future__ import annotations

from starweave.agents.linux.guards import failed_with_error, unseen_facts
from starweave.commands import Result, ResultStatus


def test_numbers_and_file_names_seen_in_the_outputs_are_grounded() -> None:
    seen = "How many lines has data/names.txt?\nexit code 0\nstdout:\n37 data/names.txt\n1,024 bytes"
    assert unseen_facts("data/names.txt has 37 lines.", seen) == []
    assert unseen_facts("It is 1024 bytes (1,024).", seen) == []
    assert unseen_facts("There are 36 lines in names.txt.", seen) == ["36"]
    assert unseen_facts("The biggest is report2.pdf with 37 lines.", seen) == ["report2.pdf"]


def test_a_number_inside_a_longer_number_is_not_grounded() -> None:
    assert unseen_facts("3 files", "exit code 0\nstdout:\n13\n") == ["3"]
    assert unseen_facts("13 files", "exit code 0\nstdout:\n13\n") == []
    assert unseen_facts("2.5 MB", "size 2.5M") == []


def test_prose_without_facts_and_abbreviations_are_not_flagged() -> None:
    assert unseen_facts("Created the folder, e.g. for logs; i.e. done.", "") == []
    assert unseen_facts("Wrote hello into demo/a.txt.", "write hello into demo/a.txt") == []
    assert unseen_facts("Renamed them all.", "") == []


def test_each_unseen_fact_is_listed_once_in_order() -> None:
    assert unseen_facts("7 and 9 and 7 in x.csv", "") == ["7", "9", "x.csv"]


def shell(code: int, stdout: str = "", stderr: str = "", error: str | None = None) -> Result:
    value = {"success": code == 0, "exit_code": code, "stdout": stdout, "stderr": stderr}
    if error:
        value = {"success": False, "error": error}
    # the router marks every unsuccessful call with the same generic error
    failed = "Tool 'execute_command' reported success: false"
    if code == 0:
        return Result(status=ResultStatus.SUCCESS, result=value)
    return Result(status=ResultStatus.FAILURE, result=value, error=failed)


def test_loud_failures_are_errors_quiet_non_zero_exits_are_answers() -> None:
    assert failed_with_error([shell(0, "ok")]) == ""
    assert failed_with_error([shell(1)]) == ""  # grep found nothing
    assert failed_with_error([shell(1, stdout="3d2\n< c")]) == ""  # diff found differences
    assert failed_with_error([shell(2, stderr="ls: cannot access 'x'")]) == "ls: cannot access 'x'"
    assert failed_with_error([shell(1, error="the command is empty")]) == "the command is empty"
    assert failed_with_error([Result(status=ResultStatus.FAILURE, error="tool missing")]) == "tool missing"
    assert len(failed_with_error([shell(1, stderr="e" * 1000)])) < 300


def test_every_linux_guard_states_one_principle_in_one_line() -> None:
    from starweave.agents.linux.guards import linux_guards

    table = linux_guards()
    names = [g.name for g in table.guards]
    assert len(set(names)) == len(names) == 9
    for guard in table.guards:
        assert (
            "\n" not in guard.principle and 20 < len(guard.principle) < 110 and guard.principle.endswith(".")
        )
    assert not linux_guards(enabled=False).enabled


def test_guards_on_and_off_read_from_yaml_and_the_environment() -> None:
    import yaml

    from starweave.config.models import SystemConfig

    assert SystemConfig.model_validate(yaml.safe_load("GUARDS: off")).guards is False
    assert SystemConfig.model_validate(yaml.safe_load("GUARDS: on")).guards is True
    assert SystemConfig.model_validate({"GUARDS": "off"}).guards is False  # an environment variable
    assert SystemConfig.model_validate({}).guards is True


def test_a_result_quotes_its_output_by_a_line_a_number_or_a_file_name() -> None:
    from starweave.agents.linux.guards import quotes_any

    assert quotes_any("huge.bin is the largest.", "huge.bin\nsmall.bin")
    assert quotes_any("data/names.txt has 37 lines.", "37 data/names.txt")
    assert not quotes_any("The files are found.", "dir1/file.c\ndir2/b.c")
    assert not quotes_any("Removed the last 3 characters of 987654321.", "987654")  # not inside a number
