"""LinuxAgent end to end on recorded model answers: real MCP servers, real files, real logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.linux_replay import answer, prompts, read_jsonl, run


async def test_multi_step_task_creates_files_and_logs(tmp_path: Path) -> None:
    answers = [
        answer("mkdir demo && echo 'hello' > demo/a.txt"),
        answer("cat demo/a.txt"),
        answer(None, "FINISH", result="demo/a.txt contains hello"),
    ]
    result = await run(tmp_path, answers, request="write hello into demo/a.txt")
    assert (tmp_path / "ws" / "demo" / "a.txt").read_text() == "hello\n"
    assert result["status"] == "FINISH"
    assert result["result"] == "demo/a.txt contains hello"
    assert result["steps"] == 3

    log_dir = tmp_path / "logs" / "run1"
    responses = read_jsonl(log_dir / "response.log")
    assert [r["step"] for r in responses] == [1, 2, 3]
    assert [r["status"] for r in responses] == ["CONTINUE", "CONTINUE", "FINISH"]
    assert responses[1]["results"][0]["result"]["stdout"] == "hello\n"
    assert responses[0]["agent_type"] == "LinuxAgent"
    assert set(responses[0]["time_cost"]) == {"LLM_INTERACTION", "ACTION_EXECUTION", "MEMORY_UPDATE"}
    requests = read_jsonl(log_dir / "request.log")
    assert [r["step"] for r in requests] == [1, 2, 3]
    # the output of step 1's command is fed back to the model at step 2 ...
    second_prompt = requests[1]["prompt"]
    assert second_prompt[-1]["role"] == "user" and "exit code 0" in second_prompt[-1]["content"]
    # ... and step 2's output (hello) at step 3
    assert "hello" in requests[2]["prompt"][-1]["content"]
    saved = json.loads((log_dir / "result.json").read_text())
    assert saved["status"] == "FINISH"
    markdown = (log_dir / "output.md").read_text()
    assert "## Step 2" in markdown and "cat demo/a.txt" in markdown
    console = (tmp_path / "console.txt").read_text()
    assert "Step 1" in console and "FINISH" in console


async def test_a_failing_command_is_retried_once_then_the_task_fails(tmp_path: Path) -> None:
    # each repeat is drawn twice (see test_linux_finish's resample tests): 1 + 2 + 2 answers
    answers = [answer("cat missing.txt")] * 5
    result = await run(tmp_path, answers)
    assert result["status"] == "FAIL"
    assert "failed 2 times;" in result["result"], result
    responses = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert len(responses) == 3  # ran twice, refused the third time


async def test_repeated_command_is_not_rerun_and_then_fails(tmp_path: Path) -> None:
    answers = [answer("echo x >> log.txt")] * 5  # each repeat is drawn twice
    result = await run(tmp_path, answers)
    assert (tmp_path / "ws" / "log.txt").read_text() == "x\n"  # ran once
    assert result["status"] == "FAIL"
    assert "kept repeating" in result["result"]
    responses = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert "Not run again" in responses[1]["note"]


async def test_invalid_answer_is_retried_with_the_error(tmp_path: Path) -> None:
    answers = ["this is not json", answer(None, "FINISH", result="done")]
    result = await run(tmp_path, answers)
    assert result["status"] == "FINISH"
    assert result["result"] == "done"


async def test_step_cap_stops_the_session(tmp_path: Path) -> None:
    answers = [answer(f"echo {i}") for i in range(5)]
    result = await run(tmp_path, answers, max_steps=2)
    assert result["status"] == "FAIL"
    assert result["steps"] == 2
    assert "Maximum steps (2)" in result["result"]


async def test_a_sandbox_refusal_is_fed_back_and_the_agent_goes_on(tmp_path: Path) -> None:
    answers = [answer("cat /etc/shadow"), answer("echo fine"), answer(None, "FINISH", result="ok")]
    result = await run(tmp_path, answers)
    assert result["status"] == "FINISH"
    assert result["steps"] == 3
    requests = read_jsonl(tmp_path / "logs" / "run1" / "request.log")
    # the model's own call comes back as its answer, the sandbox's refusal as the output after it
    assert "cat /etc/shadow" in requests[1]["prompt"][-2]["content"]
    refused = requests[1]["prompt"][-1]["content"]
    assert "exit code 1" in refused and "cat: /etc/shadow: Permission denied" in refused
    assert "That failed." in refused  # the cue after a failed call
    # and nothing of the file reached the model or the logs
    assert "root:" not in (tmp_path / "logs" / "run1" / "request.log").read_text()
    assert "root:" not in (tmp_path / "logs" / "run1" / "response.log").read_text()


async def test_the_folder_a_command_moves_to_is_where_the_next_one_runs(tmp_path: Path) -> None:
    answers = [
        answer("mkdir -p sub && cd sub"),
        answer("echo here > made.txt && pwd"),
        answer(None, "FINISH", result="Made sub/made.txt."),
    ]
    result = await run(tmp_path, answers, request="Make sub/made.txt.")
    assert result["status"] == "FINISH"
    assert (tmp_path / "ws" / "sub" / "made.txt").read_text() == "here\n"
    sub = str((tmp_path / "ws" / "sub").resolve())
    # the model is told where the next command starts, as a terminal's prompt would show
    assert f"(the next command starts in {sub})" in prompts(tmp_path)[1][-1]["content"]
    assert f"stdout:\n{sub}" in prompts(tmp_path)[2][-1]["content"]


async def test_a_call_may_run_again_after_other_steps(tmp_path: Path) -> None:
    answers = [answer("ls"), answer("mkdir demo"), answer("ls"), answer(None, "FINISH", result="done")]
    result = await run(tmp_path, answers)
    assert result["status"] == "FINISH"
    responses = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert "demo" in responses[2]["results"][0]["result"]["stdout"]  # the second ls really ran


async def test_a_failed_call_may_be_retried(tmp_path: Path) -> None:
    # the repeat is drawn twice before it runs; giving up right after a failure is refused once
    answers = [*[answer("cat missing.txt")] * 3, *[answer(None, "FAIL", result="no file")] * 2]
    result = await run(tmp_path, answers)
    assert result["status"] == "FAIL" and result["result"] == "no file"
    responses = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert responses[1]["results"], "the retry was not run"
    assert not responses[1]["note"]


async def test_dangerous_command_is_confirmed_by_the_user(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "old.txt").write_text("data")
    answers = [answer("rm old.txt"), answer(None, "FINISH", result="removed")]
    result = await run(tmp_path, answers, confirm=True)
    assert result["asked"] == ["rm old.txt"]
    assert result["status"] == "FINISH"
    assert not (tmp_path / "ws" / "old.txt").exists()
    responses = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert [r["status"] for r in responses] == ["CONFIRM", "CONTINUE", "FINISH"]
    assert responses[1]["note"] == "Confirmed by the user."
    # the model's next prompt shows what the confirmed command did
    requests = read_jsonl(tmp_path / "logs" / "run1" / "request.log")
    assert "exit code 0" in requests[-1]["prompt"][-1]["content"]


async def test_dangerous_command_refused_by_the_user_stops_the_task(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "keep.txt").write_text("data")
    result = await run(tmp_path, [answer("rm keep.txt"), answer(None, "FINISH", result="removed")])
    assert result["asked"] == ["rm keep.txt"]
    assert result["status"] == "FAIL"
    assert "did not allow" in result["result"]
    assert (tmp_path / "ws" / "keep.txt").exists()


async def test_dangerous_command_runs_with_yes_without_asking(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "keep.txt").write_text("data")
    result = await run(
        tmp_path, [answer("rm keep.txt"), answer(None, "FINISH", result="removed")], auto_approve=True
    )
    assert result["asked"] == []
    assert result["status"] == "FINISH"
    assert not (tmp_path / "ws" / "keep.txt").exists()


async def test_exhausted_replay_file_fails_cleanly(tmp_path: Path) -> None:
    result = await run(tmp_path, [answer("echo one")])
    assert result["status"] == "FAIL"
    assert "answers" in result["error"] or "replay" in result["error"].lower()


@pytest.mark.parametrize("tool", ["write_file"])
async def test_file_tool_through_the_agent(tmp_path: Path, tool: str) -> None:
    answers = [
        {
            "observation": "none",
            "thought": "write it",
            "action": {
                "function": tool,
                "arguments": {"path": "notes.txt", "content": "one\ntwo\n"},
                "status": "CONTINUE",
            },
            "result": "",
        },
        answer(None, "FINISH", result="written"),
    ]
    result = await run(tmp_path, answers)
    assert result["status"] == "FINISH"
    assert (tmp_path / "ws" / "notes.txt").read_text() == "one\ntwo\n"


async def test_the_model_sees_the_workspace_first_and_the_folder_after_a_failure(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "Desktop").mkdir(parents=True)
    (ws / "Desktop" / "todo.txt").write_text("milk\n")
    answers = [
        answer("cd Desktop && cat missing.txt"),
        answer("cat todo.txt"),
        answer(None, "FINISH", result="milk"),
    ]
    # the run's log folder is inside the workspace, as with the default --log-dir
    result = await run(tmp_path, answers, workspace=ws, log_dir=ws / "logs")
    assert result["status"] == "FINISH"
    steps = [r["prompt"] for r in read_jsonl(ws / "logs" / "run1" / "request.log")]
    first = steps[0][1]["content"]
    # logs/ holds only the run's own folder: not shown either (the model would take it for the user's)
    assert first.startswith("Request: do it\n\nThe folder you are in holds (2 entries, 3 levels deep):")
    assert "Desktop/todo.txt  5 B" in first and "request.log" not in first and "run1" not in first
    assert "logs/" not in first
    after = steps[1][-1]["content"]
    assert "exit code 1" in after
    assert "The folder where the next command starts holds (1 entry):\ntodo.txt  5 B\n" in after
    assert "The folder where" not in steps[2][-1]["content"]  # only after a failure
