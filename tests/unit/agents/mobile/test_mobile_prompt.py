"""The MobileAgent's prompt: section order, the control and app lists, size, and the visual content."""

from __future__ import annotations

from typing import Any

from starweave.agents.app.controls import Control
from starweave.agents.mobile import MobileAgent, MobileProcessorContext
from starweave.agents.mobile.prompter import MAX_CONTROLS, controls_text
from starweave.agents.mobile.tools import model_tool

TOOLS: list[dict[str, Any]] = [
    {
        "name": "launch_app",
        "description": "Launch an app by its package name.",
        "input_schema": {"properties": {"package_name": {"type": "string"}}, "required": ["package_name"]},
    },
    {
        "name": "click_control",
        "description": "Click a control of the screen by its id.",
        "input_schema": {
            "properties": {"control_id": {"type": "string"}, "control_name": {"type": "string"}},
            "required": ["control_id", "control_name"],
        },
    },
]


def context(controls: int = 3) -> MobileProcessorContext:
    local = MobileProcessorContext()
    local.installed_apps = ["com.example.notes", "com.android.settings"]
    local.current_controls = [
        Control(id=str(i), name=f"Item {i}", control_type="Button", rect=[0, 0, 10, 10])
        for i in range(1, controls + 1)
    ]
    local.clean_screenshot_url = "data:image/png;base64,AAAA"
    local.annotated_screenshot_url = "data:image/png;base64,BBBB"
    return local


def test_the_text_has_the_spec_sections_in_order() -> None:
    agent = MobileAgent()
    agent.success_actions = ["launch_app(package_name='com.example.notes')"]
    messages = agent.message_constructor("open settings", TOOLS, context())
    text = messages[1]["content"]
    assert isinstance(text, str)  # text only: no images for the embedded model
    sections = [
        "[Previous Plan]",
        "[User Request]",
        "[Installed Apps]",
        "[Current Screen Controls]",
        "[Last Success Actions]",
    ]
    positions = [text.index(s) for s in sections]
    assert positions == sorted(positions)
    assert "open settings" in text and "com.example.notes, com.android.settings" in text
    assert "[2] Button 'Item 2'" in text
    assert "launch_app(package_name='com.example.notes')\nNext: one action" in text
    system = messages[0]["content"]
    assert "launch_app(package_name)" in system and "click_control(control_id" in system


def test_the_prompt_stays_small_for_the_embedded_model() -> None:
    agent = MobileAgent()
    tools = [model_tool(t) for t in TOOLS]
    messages = agent.message_constructor("open settings", tools, context(controls=200))
    user = str(messages[1]["content"])
    assert f"... {200 - MAX_CONTROLS} more" in user
    # ~3 characters a token: well inside the 4,096-token window with room for the answer
    assert sum(len(str(m["content"])) for m in messages) < 6000


def test_a_visual_prompt_sends_clean_then_annotated_then_text() -> None:
    agent = MobileAgent(is_visual=True)
    content = agent.message_constructor("open settings", TOOLS, context())[1]["content"]
    images = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert images == ["data:image/png;base64,AAAA", "data:image/png;base64,BBBB"]
    assert content[-1]["type"] == "text" and "[User Request]" in content[-1]["text"]


def test_the_previous_plan_and_note_come_from_the_last_step() -> None:
    from starweave.agent import MemoryItem

    agent = MobileAgent()
    item = MemoryItem()
    item.add_values_from_dict({"thought": "open the notes app", "note": "The action failed: no app"})
    agent.add_memory(item)
    text = str(agent.message_constructor("x", TOOLS, context())[1]["content"])
    assert text.split("[Previous Plan]")[1].split("[User Request]")[0].strip() == "open the notes app"
    assert text.endswith("The action failed: no app")


def test_an_empty_screen_says_so_and_control_names_are_shortened() -> None:
    assert "no controls found" in controls_text([])
    long = Control(id="1", name="x" * 100, control_type="TextView")
    assert controls_text([long]) == f"[1] TextView '{'x' * 40}'"


def test_control_name_is_optional_for_the_model() -> None:
    assert model_tool(TOOLS[1])["input_schema"]["required"] == ["control_id"]
    assert model_tool(TOOLS[0]) is TOOLS[0]
