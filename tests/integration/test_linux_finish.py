"""FINISH on recorded answers, with the real shell: a finishing call must succeed, a result must be grounded.

See starweave/agents/linux/guards.py. Every test runs the real agent and MCP servers in a temp workspace.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from helpers.linux_replay import answer, prompts, responses, run


async def test_a_finish_with_a_call_that_succeeds_ends_the_task_in_one_step(tmp_path: Path) -> None:
    answers = [
        answer("mkdir -p demo && echo hello > demo/a.txt", "FINISH", result="Wrote hello into demo/a.txt.")
    ]
    result = await run(tmp_path, answers, request="Create demo/a.txt with hello.")
    assert (tmp_path / "ws" / "demo" / "a.txt").read_text() == "hello\n"
    assert result["status"] == "FINISH" and result["steps"] == 1
    assert result["result"] == "Wrote hello into demo/a.txt."  # nothing printed, nothing added
    assert [r["status"] for r in responses(tmp_path)] == ["FINISH"]


async def test_a_finish_with_a_failing_call_goes_on_with_the_error(tmp_path: Path) -> None:
    answers = [
        answer("cat missing.txt > copy.txt", "FINISH", result="Copied."),
        answer("echo fixed > copy.txt", "FINISH", result="Wrote copy.txt."),
    ]
    result = await run(tmp_path, answers, request="Make copy.txt.")
    assert result["status"] == "FINISH" and result["steps"] == 2
    assert result["result"] == "Wrote copy.txt."
    assert [r["status"] for r in responses(tmp_path)] == ["CONTINUE", "FINISH"]
    # the model sees why it did not finish, with the command's error output
    seen = prompts(tmp_path)[1][-1]["content"]
    assert "Not finished: the command failed" in seen
    assert "missing.txt" in seen and "exit code 1" in seen


async def test_a_finish_with_a_call_the_sandbox_refuses_goes_on_with_the_reason(tmp_path: Path) -> None:
    outside = Path("/etc") / f"starweave-list-{secrets.token_hex(4)}.txt"
    answers = [
        answer(f"ls > {outside}", "FINISH", result="Listed."),
        answer("ls > list.txt", "FINISH", result="Listed into list.txt."),
    ]
    try:
        result = await run(tmp_path, answers, request="Put the listing into list.txt.")
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)  # only there if the sandbox let the write through
    assert result["status"] == "FINISH" and result["steps"] == 2
    assert [r["status"] for r in responses(tmp_path)] == ["CONTINUE", "FINISH"]
    seen = prompts(tmp_path)[1][-1]["content"]
    # outside the workspace the file system is read-only: bash says so, and the model sees it
    assert "Not finished" in seen and f"{outside}: Read-only file system" in seen
    assert (tmp_path / "ws" / "list.txt").exists()


async def test_a_finishing_call_that_prints_adds_its_output_to_the_result(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "names.txt").write_text("ann\nbob\ncy\n")
    answers = [answer("wc -l names.txt", "FINISH", result="Counted the lines.")]
    result = await run(tmp_path, answers, request="Count the lines of names.txt.")
    assert result["status"] == "FINISH"
    assert result["result"] == "Counted the lines.\nOutput:\n3 names.txt"


async def test_a_finishing_call_whose_result_guesses_a_number_shows_the_output_first(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "names.txt").write_text("ann\nbob\ncy\n")
    answers = [
        answer("wc -l names.txt", "FINISH", result="names.txt has 5 lines."),
        answer(None, "FINISH", result="names.txt has 3 lines."),
    ]
    result = await run(tmp_path, answers, request="How many lines has names.txt?")
    assert result["status"] == "FINISH" and result["result"] == "names.txt has 3 lines."
    assert [r["status"] for r in responses(tmp_path)] == ["CONTINUE", "FINISH"]
    seen = prompts(tmp_path)[1][-1]["content"]
    assert "your result states 5 before you saw the output" in seen and "3 names.txt" in seen


async def test_a_finishing_call_whose_number_the_output_confirms_finishes_at_once(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "names.txt").write_text("ann\nbob\ncy\n")
    answers = [answer("wc -l names.txt", "FINISH", result="names.txt has 3 lines.")]
    result = await run(tmp_path, answers, request="How many lines has names.txt?")
    assert result["status"] == "FINISH" and result["steps"] == 1
    assert result["result"].startswith("names.txt has 3 lines.")


async def test_a_result_stating_facts_no_output_showed_is_refused_once(tmp_path: Path) -> None:
    answers = [
        answer(None, "FINISH", result="There are 12 files."),
        answer("ls | wc -l"),
        answer(None, "FINISH", result="There are 0 files."),
    ]
    result = await run(tmp_path, answers, request="How many files are here?")
    assert result["status"] == "FINISH" and result["result"] == "There are 0 files."
    assert [r["status"] for r in responses(tmp_path)] == ["CONTINUE", "CONTINUE", "FINISH"]
    refusal = prompts(tmp_path)[1][-1]["content"]
    assert "your result states 12, which no output showed" in refusal


async def test_the_model_may_insist_after_a_refusal(tmp_path: Path) -> None:
    answers = [answer(None, "FINISH", result="It is 42."), answer(None, "FINISH", result="It is 42.")]
    result = await run(tmp_path, answers, request="What is six times seven?")
    assert result["status"] == "FINISH" and result["result"] == "It is 42."
    assert result["steps"] == 2


async def test_refusals_are_capped_per_request(tmp_path: Path) -> None:
    answers = [
        answer(None, "FINISH", result="It is 1."),
        answer("echo a"),
        answer(None, "FINISH", result="It is 2."),
        answer("echo b"),
        answer(None, "FINISH", result="It is 3."),  # a third refusal would be one too many
    ]
    result = await run(tmp_path, answers, request="Guess.")
    assert result["status"] == "FINISH" and result["result"] == "It is 3.\nOutput:\nb"
    assert [r["status"] for r in responses(tmp_path)] == ["CONTINUE"] * 4 + ["FINISH"]


async def test_a_finish_right_after_a_failed_command_is_refused_once(tmp_path: Path) -> None:
    answers = [
        answer("cat nothing.txt"),
        answer(None, "FINISH", result="Done."),
        answer("echo made > nothing.txt"),
        answer(None, "FINISH", result="Done."),
    ]
    result = await run(tmp_path, answers, request="Make sure nothing.txt exists.")
    assert result["status"] == "FINISH" and result["steps"] == 4
    refusal = prompts(tmp_path)[2][-1]["content"]
    assert "Not finished: the last command failed" in refusal and "nothing.txt" in refusal


async def test_a_quiet_non_zero_exit_is_an_answer_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "app.log").write_text("INFO fine\n")
    answers = [answer("grep ERROR app.log"), answer(None, "FINISH", result="app.log has no ERROR line.")]
    result = await run(tmp_path, answers, request="Does app.log have an ERROR line?")
    assert result["status"] == "FINISH" and result["steps"] == 2
    # the model was shown the exit code as a result, with the usual cue, not "That failed"
    seen = prompts(tmp_path)[1][-1]["content"]
    assert "exit code 1" in seen and "That failed" not in seen and "reply FINISH" in seen
    assert "The folder where the next command starts" not in seen  # nothing was missing


async def test_a_confirmed_finishing_call_that_fails_goes_on(tmp_path: Path) -> None:
    answers = [
        answer("rm missing.txt", "FINISH", result="Removed."),
        answer(None, "FAIL", result="missing.txt does not exist."),
        answer(None, "FAIL", result="missing.txt does not exist."),
    ]
    result = await run(tmp_path, answers, request="Remove missing.txt.", confirm=True)
    assert result["asked"] == ["rm missing.txt"]
    assert result["status"] == "FAIL" and result["result"] == "missing.txt does not exist."
    seen = prompts(tmp_path)[1][-1]["content"]
    assert "Not finished: the command failed" in seen and "missing.txt" in seen


async def test_giving_up_right_after_a_failed_command_is_refused_once(tmp_path: Path) -> None:
    (tmp_path / "ws" / "cache").mkdir(parents=True)
    (tmp_path / "ws" / "cache" / "a.tmp").write_text("1")
    answers = [
        answer("find cache -name '*.tmp -delete", "FINISH", result="Deleted."),  # the quote is not closed
        answer(None, "FAIL", result="find does not work here."),
        answer("find cache -name '*.tmp' -delete", "FINISH", result="Deleted the .tmp files."),
    ]
    result = await run(tmp_path, answers, request="Delete the .tmp files in cache.", auto_approve=True)
    assert result["status"] == "FINISH" and not (tmp_path / "ws" / "cache" / "a.tmp").exists()
    # bash's own error came back
    first = prompts(tmp_path)[1][-1]["content"]
    assert "unexpected EOF while looking for matching" in first
    # after a failure the cue asks for a different command, not for FINISH
    assert first.endswith(
        "That failed. Send a different command that avoids the error, or FAIL if the request cannot be done."
    )
    assert "Not given up yet" in prompts(tmp_path)[2][-1]["content"]


async def test_a_fail_that_does_not_follow_a_failure_stands(tmp_path: Path) -> None:
    answers = [answer("ls"), answer(None, "FAIL", result="There is nothing to delete.")]
    result = await run(tmp_path, answers, request="Delete the backups.")
    assert result["status"] == "FAIL" and result["result"] == "There is nothing to delete."
    assert result["steps"] == 2


async def test_a_fail_with_a_call_does_not_run_the_call(tmp_path: Path) -> None:
    result = await run(tmp_path, [answer("echo x > made.txt", "FAIL", result="Cannot.")], request="Do it.")
    assert result["status"] == "FAIL" and result["result"] == "Cannot."
    assert not (tmp_path / "ws" / "made.txt").exists()


async def test_a_confirmed_finishing_call_that_succeeds_finishes(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "old.txt").write_text("x")
    result = await run(
        tmp_path,
        [answer("rm old.txt", "FINISH", result="Removed old.txt.")],
        request="Remove old.txt.",
        confirm=True,
    )
    assert result["status"] == "FINISH" and result["result"] == "Removed old.txt."
    assert not (tmp_path / "ws" / "old.txt").exists()


async def test_finishing_with_the_call_that_just_succeeded_does_not_run_it_again(tmp_path: Path) -> None:
    answers = [answer("echo x >> log.txt"), answer("echo x >> log.txt", "FINISH", result="Appended x.")]
    result = await run(tmp_path, answers, request="Append x to log.txt.")
    assert (tmp_path / "ws" / "log.txt").read_text() == "x\n"  # ran once
    assert result["status"] == "FINISH" and result["result"] == "Appended x."
    assert result["steps"] == 2


async def test_an_empty_finish_before_anything_ran_is_refused_once(tmp_path: Path) -> None:
    answers = [
        answer(None, "FINISH"),
        answer("mkdir -p images && mv inbox/*.png images/", "FINISH", result="Moved the .png files."),
    ]
    (tmp_path / "ws" / "inbox").mkdir(parents=True)
    (tmp_path / "ws" / "inbox" / "cat.png").write_text("c")
    result = await run(
        tmp_path, answers, request="Move the .png files of inbox into images.", auto_approve=True
    )
    assert result["status"] == "FINISH" and result["steps"] == 2
    assert (tmp_path / "ws" / "images" / "cat.png").is_file()
    assert "nothing has been run yet" in prompts(tmp_path)[1][-1]["content"]


async def test_a_finish_that_answers_without_commands_is_accepted(tmp_path: Path) -> None:
    result = await run(tmp_path, [answer(None, "FINISH", result="Hello!")], request="Say hello.")
    assert result["status"] == "FINISH" and result["result"] == "Hello!" and result["steps"] == 1


async def test_a_repeated_failing_call_is_drawn_again_and_the_new_call_runs(tmp_path: Path) -> None:
    loop = 'for f in *.txt; do cat "$f"; done'  # no .txt file: the glob stays as it is, cat fails
    answers = [
        answer(loop),
        answer(loop),  # the same call again: drawn once more
        answer("ls", "FINISH", result="Listed."),
    ]
    result = await run(tmp_path, answers, request="List the files.")
    assert result["status"] == "FINISH" and result["steps"] == 2
    steps = responses(tmp_path)
    assert steps[1]["call"] == "execute_command(command='ls')"
    assert steps[1]["tokens"] == 0  # replay counts no tokens; both draws were made:
    calls = (tmp_path / "logs" / "run1" / "llm.log").read_text().splitlines()
    assert len(calls) == 3
    # the loop ran in bash and its failure came back
    assert "cat: '*.txt': No such file or directory" in prompts(tmp_path)[1][-1]["content"]


async def test_a_finish_naming_the_call_that_just_succeeded_is_not_drawn_again(tmp_path: Path) -> None:
    answers = [answer("ls"), answer("ls", "FINISH", result="Nothing here.")]
    result = await run(tmp_path, answers, request="What is here?")
    assert result["status"] == "FINISH" and result["steps"] == 2
    assert len((tmp_path / "logs" / "run1" / "llm.log").read_text().splitlines()) == 2


async def test_taking_turns_between_two_failing_calls_ends_the_task(tmp_path: Path) -> None:
    first, second = answer("cat a.txt"), answer("cat b.txt")
    # each call proposed again after it failed is drawn twice
    answers = [first, second, first, first, second, second, first, first]
    result = await run(tmp_path, answers, request="Show a.txt.")
    assert result["status"] == "FAIL"
    assert (
        result["result"]
        == "Stopped: execute_command(command='cat a.txt') failed 2 times; the task needs another approach."
    )
    assert len(responses(tmp_path)) == 5


# ---- checked: a FINISH rests on what the changed files hold now ------------------------------------


def _words(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "words.txt").write_text("pear\napple\n")


async def test_a_finish_over_a_file_nobody_looked_at_shows_it_once(tmp_path: Path) -> None:
    _words(tmp_path)
    answers = [
        answer("sort words.txt > sorted.txt", "FINISH", result="Sorted into sorted.txt."),
        answer(None, "FINISH", result="Sorted into sorted.txt."),
    ]
    result = await run(tmp_path, answers, request="Sort the lines of words.txt into sorted.txt.")
    assert result["status"] == "FINISH" and result["steps"] == 2
    shown = prompts(tmp_path)[1][-1]["content"]
    # the workspace, read back after the change, not the model's claim
    assert "Not finished yet: check what the workspace holds now" in shown
    assert "- sorted.txt: new, 11 B, begins:\napple\npear" in shown
    # result.json says what the workspace holds, read there after the run
    assert result["files"] == [
        {"path": "sorted.txt", "change": "new", "kind": "f", "size": 11, "head": "apple\npear\n"}
    ]
    assert result["absent"] == [] and result["complete"] is True


async def test_a_result_naming_a_file_that_was_never_there_is_refused_once(tmp_path: Path) -> None:
    answers = [
        answer(None, "FINISH", result="Saved it in summary.md."),
        answer(None, "FINISH", result="Saved it in summary.md."),
    ]
    result = await run(tmp_path, answers, request="Summarise the notes into summary.md.")
    assert result["status"] == "FINISH" and result["steps"] == 2  # the model insisted: it stands
    shown = prompts(tmp_path)[1][-1]["content"]
    assert "your result names summary.md, which the workspace does not hold and did not hold before" in shown
    assert result["absent"] == ["summary.md"]  # and result.json says so


async def test_a_finish_that_looked_at_its_change_is_accepted_at_once(tmp_path: Path) -> None:
    _words(tmp_path)
    answers = [answer("sort words.txt > sorted.txt && cat sorted.txt", "FINISH", result="Sorted.")]
    result = await run(tmp_path, answers, request="Sort the lines of words.txt into sorted.txt.")
    assert result["status"] == "FINISH" and result["steps"] == 1


async def test_moved_copied_and_typed_files_need_no_second_look(tmp_path: Path) -> None:
    _words(tmp_path)
    answers = [
        answer(
            "mkdir -p old && mv words.txt old/ && cp old/words.txt backup.txt && echo note > note.txt",
            "FINISH",
            result="Done.",
        )
    ]
    result = await run(tmp_path, answers, request="Tidy up.", auto_approve=True)
    assert result["status"] == "FINISH" and result["steps"] == 1


async def test_with_guards_off_nothing_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STARWEAVE_SYSTEM__GUARDS", "off")
    _words(tmp_path)
    answers = [answer("sort words.txt > sorted.txt", "FINISH", result="Sorted 12 lines into sorted.txt.")]
    result = await run(tmp_path, answers, request="Sort the lines of words.txt into sorted.txt.")
    # neither the unseen number (grounded) nor the unread file (checked) stops this FINISH
    assert result["status"] == "FINISH" and result["steps"] == 1
