"""LinuxAgentPrompter: compact tool rendering, history as chat turns, the prompt budget."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.shell_sessions import SANDBOXES, run, session_for

from starweave.agent import MemoryItem
from starweave.agents.linux.feedback import describe_result
from starweave.agents.linux.prompter import (
    MAX_HISTORY_STEPS,
    LinuxAgentPrompter,
    answer_text,
    compact_tool_prompt,
    terse_tool_prompt,
)
from starweave.agents.linux.response import response_json_schema
from starweave.commands import Result, ResultStatus
from starweave.llm.jsonschema import schema_errors

TOOL = {
    "name": "execute_command",
    "description": "Run a command.\n\n        Long details the model does not need.",
    "input_schema": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "timeout": {"type": "integer", "default": 30},
        },
        "required": ["command"],
    },
}


def prompter() -> LinuxAgentPrompter:
    return LinuxAgentPrompter("linux_agent.yaml", "linux_agent_example.yaml")


def item(step: int, output: str, raw: str = "") -> MemoryItem:
    memory = MemoryItem()
    memory.add_values_from_dict(
        {
            "step": step,
            "call": f"execute_command(command='echo {step}')",
            "output": output,
            "response": {
                "thought": f"t{step}",
                "action": {"function": "execute_command", "arguments": {"command": f"echo {step}"}},
            },
            "answer_text": raw,
        }
    )
    return memory


def test_compact_tool_prompt_keeps_signature_summary_and_required_parameters() -> None:
    text = compact_tool_prompt(TOOL)
    assert text.splitlines()[0] == "- execute_command(command, timeout=30): Run a command."
    assert "    command: The command line." in text
    assert "Long details" not in text


def test_terse_tool_prompt_is_one_line_with_required_parameters_and_first_sentence() -> None:
    tool = {**TOOL, "description": "Run a command (in a sandbox). It prints exit code e.g. 0.\n\nMore."}
    assert terse_tool_prompt(tool) == "- execute_command(command): Run a command."
    # a tool of optional parameters only still shows them, or the model could never pass one
    listing = {
        "name": "list_directory",
        "description": "List a directory.",
        "input_schema": {"properties": {"path": {"type": "string", "default": "."}}},
    }
    assert terse_tool_prompt(listing) == '- list_directory(path="."): List a directory.'
    # a flag changes what the call does, so it is shown
    writer = {
        "name": "write_file",
        "description": "Write (or append) text to a file.",
        "input_schema": {
            "properties": {"path": {}, "content": {}, "append": {"type": "boolean", "default": False}},
            "required": ["path", "content"],
        },
    }
    assert terse_tool_prompt(writer) == "- write_file(path, content, append=false): Write text to a file."


def test_system_prompt_lists_tools_tersely() -> None:
    system = prompter().system_prompt_construction([TOOL])
    assert "- execute_command(command): Run a command." in system
    assert "timeout" not in system
    assert "{" in system and "{{" not in system  # format() consumed the escapes


def test_examples_render_as_the_model_sees_a_real_exchange(tmp_path: Path) -> None:
    examples = tmp_path / "examples.yaml"
    examples.write_text(
        yaml.safe_dump(
            {
                "version": 1.0,
                "example1": {
                    "Request": "Count.",
                    "Response": {"a": 1},
                    "Output": "exit code 0\nstdout:\n4",
                    "Next": {"b": ""},
                },
                "example2": {"Request": "Make.", "Response": {"c": [1, 2]}},
                "other": {"Request": "not an example"},
            }
        )
    )
    rendered = LinuxAgentPrompter("linux_agent.yaml", examples).examples_prompt_helper()
    assert (
        rendered
        == 'Request: Count.\n{"a":1}\nOutput: exit code 0 stdout: 4\n{"b":""}\n\nRequest: Make.\n{"c":[1,2]}'
    )


WRITE_TOOL = {
    "name": "write_file",
    "description": "Write text to a file.",
    "input_schema": {
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}


def shipped_answers() -> list[dict[str, Any]]:
    system = prompter().system_prompt_construction([TOOL, WRITE_TOOL])
    return [json.loads(line) for line in system.splitlines() if line.startswith("{")]


def is_loop(answer: dict[str, Any]) -> bool:
    """Whether ``answer`` runs a shell ``for`` loop."""
    command = str(answer["action"]["arguments"].get("command") or "")
    return answer["action"]["function"] == "execute_command" and re.match(r"for \w+ in ", command) is not None


def test_shipped_examples_are_valid_answers_showing_both_ways_to_finish() -> None:
    answers = shipped_answers()
    schema = response_json_schema([TOOL, WRITE_TOOL])
    assert answers and all(schema_errors(a, schema) == [] for a in answers)
    actions = [(a["action"]["function"], a["action"]["status"], bool(a["result"])) for a in answers]
    # a change done by one finishing call; a question answered after its output was seen
    assert ("execute_command", "FINISH", True) in actions
    assert ("execute_command", "CONTINUE", False) in actions
    assert ("", "FINISH", True) in actions
    # and work on many files done by one bash loop, whose output is seen before the FINISH
    loops = [a for a in answers if is_loop(a)]
    assert [a["action"]["status"] for a in loops] == ["CONTINUE"]


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_the_example_loop_does_what_its_answer_says(tmp_path: Path, kind: str) -> None:
    lines = prompter().system_prompt_construction([TOOL, WRITE_TOOL]).splitlines()
    answers = [(i, json.loads(line)) for i, line in enumerate(lines) if line.startswith("{")]
    [(index, loop)] = [(i, a) for i, a in answers if is_loop(a)]
    command = loop["action"]["arguments"]["command"]
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    for name in ("a", "b"):
        (ws / "data" / f"{name}.csv").write_text(f"{name},head\n1,2\n")
    (ws / "top.csv").write_text("top\n")  # not in the folder the request names
    session = session_for(kind, ws)
    value = await run(session, command)  # real bash in the sandbox, as execute_command runs it
    assert sorted(p.name for p in (ws / "data").iterdir()) == ["a.csv", "a.head", "b.csv", "b.head"]
    assert (ws / "data" / "a.head").read_text() == "a,head\n" and not (ws / "top.head").exists()
    # the output the example shows is what the model really sees of that call
    shown = describe_result(Result(status=ResultStatus.SUCCESS, result=value))
    assert lines[index + 1] == f"Output: {' '.join(shown.split())}"
    # only the .csv files get one
    (ws / "data" / "c.csv").write_text("c\n")
    (ws / "data" / "keep.txt").write_text("k")
    again = await run(session, command)
    assert again["exit_code"] == 0, again
    made = sorted(p.name for p in (ws / "data").iterdir() if p.suffix == ".head")
    assert made == ["a.head", "b.head", "c.head"]


def test_system_prompt_is_the_same_for_every_request() -> None:
    # the model server reuses the KV cache of a matching prefix: nothing volatile goes first
    one = prompter().prompt_construction(prompter().system_prompt_construction([TOOL]), "a")
    two = prompter().prompt_construction(prompter().system_prompt_construction([TOOL]), "b")
    assert one[0] == two[0]


def test_history_alternates_answer_and_result_and_shortens_old_steps() -> None:
    items = [item(i, f"output {i} " + "x" * 1000) for i in range(6)]
    messages = prompter().history_messages(items)
    assert [m["role"] for m in messages] == ["assistant", "user"] * 6
    assert messages[0]["content"].startswith('{"thought":"t0","action":{"function":"execute_command"')
    assert messages[1]["content"].startswith("Output:\noutput 0")
    assert len(messages[1]["content"]) < 600  # an old step is clipped
    assert "x" * 1000 in messages[-1]["content"]  # a recent one is not
    assert "FINISH" in messages[-1]["content"]  # the finish cue


def test_history_gives_back_the_models_own_text_when_it_matches_the_answer() -> None:
    response = {
        "thought": "t1",
        "action": {"function": "execute_command", "arguments": {"command": "echo 1"}},
    }
    spaced = json.dumps(response, indent=1)
    assert answer_text(item(1, "ok", raw=spaced)) == spaced  # the cached prefix stays the same
    assert answer_text(item(1, "ok", raw='{"thought": "other"}')) == json.dumps(
        response, separators=(",", ":")
    )
    assert answer_text(item(1, "ok", raw="not json")).startswith('{"thought":"t1"')


def test_a_failed_step_is_reported_with_the_cue_to_change_the_command() -> None:
    output = "exit code 1\nstderr:\ncat: a.txt: No such file or directory"
    failed = item(1, output)
    failed.set_value("failed", True)
    [_, report] = prompter().history_messages([failed])
    assert report["content"].startswith(f"Output:\n{output}\n")
    assert "Send a different command" in report["content"] and "FINISH" not in report["content"]


def test_history_keeps_at_most_the_last_steps_and_says_so() -> None:
    items = [item(i, "ok") for i in range(MAX_HISTORY_STEPS + 3)]
    messages = prompter().history_messages(items)
    assert len(messages) == 2 * MAX_HISTORY_STEPS
    assert messages[1]["content"].startswith("(3 earlier steps are not shown.)")


def test_budget_drops_oldest_steps_then_clips_the_last() -> None:
    items = [item(i, "y" * 2000) for i in range(4)]
    messages = prompter().history_messages(items, budget_chars=3000)
    assert len(messages) == 2
    assert "echo 3" in messages[0]["content"]
    assert "earlier steps are not shown" in messages[1]["content"]
    tiny = prompter().history_messages(items, budget_chars=500)
    assert len(tiny) == 2
    assert sum(len(m["content"]) for m in tiny) < 900
