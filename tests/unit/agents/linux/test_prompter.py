"""LinuxAgentPrompter: compact tool rendering, history as chat turns, the prompt budget."""

from __future__ import annotations

from starweave.agent import MemoryItem
from starweave.agents.linux.prompter import (
    MAX_HISTORY_STEPS,
    LinuxAgentPrompter,
    compact_tool_prompt,
)

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


def item(step: int, output: str) -> MemoryItem:
    memory = MemoryItem()
    memory.add_values_from_dict(
        {
            "step": step,
            "call": f"execute_command(command='echo {step}')",
            "output": output,
            "response": {"thought": f"t{step}", "action": {"function": "execute_command"}},
        }
    )
    return memory


def test_compact_tool_prompt_keeps_signature_summary_and_required_parameters() -> None:
    text = compact_tool_prompt(TOOL)
    assert text.splitlines()[0] == "- execute_command(command, timeout=30): Run a command."
    assert "    command: The command line." in text
    assert "Long details" not in text


def test_system_prompt_lists_tools_and_examples() -> None:
    system = prompter().system_prompt_construction([TOOL])
    assert "- execute_command(command, timeout=30)" in system
    assert "[Example 1:]" in system and "wc -l /etc/hostname" in system
    assert "{" in system and "{{" not in system  # format() consumed the escapes


def test_history_alternates_answer_and_result_and_shortens_old_steps() -> None:
    items = [item(i, f"output {i} " + "x" * 1000) for i in range(6)]
    messages = prompter().history_messages(items)
    assert [m["role"] for m in messages] == ["assistant", "user"] * 6
    assert '"thought": "t0"' in messages[0]["content"]
    assert "Result of execute_command(command='echo 0')" in messages[1]["content"]
    assert len(messages[1]["content"]) < 600  # an old step is clipped
    assert "x" * 1000 in messages[-1]["content"]  # a recent one is not
    assert "FINISH" in messages[-1]["content"]  # the finish cue


def test_history_keeps_at_most_the_last_steps_and_says_so() -> None:
    items = [item(i, "ok") for i in range(MAX_HISTORY_STEPS + 3)]
    messages = prompter().history_messages(items)
    assert len(messages) == 2 * MAX_HISTORY_STEPS
    assert messages[1]["content"].startswith("(3 earlier steps are not shown.)")


def test_budget_drops_oldest_steps_then_clips_the_last() -> None:
    items = [item(i, "y" * 2000) for i in range(4)]
    messages = prompter().history_messages(items, budget_chars=3000)
    assert len(messages) == 2
    assert "echo 3" in messages[1]["content"]
    assert "earlier steps are not shown" in messages[1]["content"]
    tiny = prompter().history_messages(items, budget_chars=500)
    assert len(tiny) == 2
    assert sum(len(m["content"]) for m in tiny) < 900
