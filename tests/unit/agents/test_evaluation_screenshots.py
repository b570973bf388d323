"""A visual EvaluationAgent sees the run's step screenshots (all, or the first and last, capped);
a text-only one none; desktop steps show their subtask, application, plan and output."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from PIL import Image

from starweave.agents.evaluation import EvaluationAgent, trajectory_text
from starweave.agents.evaluation.screenshots import MAX_IMAGES, chosen_screenshots
from starweave.config import StarweaveConfig
from starweave.llm.providers.replay import ReplayClient
from starweave.session.evaluation import configure_screenshots

VERDICT = {"reason": "the display shows 5", "sub_scores": [], "complete": "yes"}


def screenshots(folder: Path, steps: list[int]) -> Path:
    """A run folder with ``action_step{N}.png`` (each a different colour) and the variants of each
    moment that the judge must not get."""
    folder.mkdir(parents=True, exist_ok=True)
    for step in steps:
        Image.new("RGB", (8, 8), (step, 0, 0)).save(folder / f"action_step{step}.png")
        for variant in ("_annotated", "_selected_controls", "_concat", "_desktop"):
            Image.new("RGB", (8, 8), (0, step, 0)).save(folder / f"action_step{step}{variant}.png")
    return folder


def red_of(url: str) -> int:
    """The step number a test image encodes in its red channel."""
    from io import BytesIO

    data = base64.b64decode(url.split(",", 1)[1])
    return int(Image.open(BytesIO(data)).getpixel((0, 0))[0])  # type: ignore[index]


async def user_content(tmp_path: Path, folder: Path, visual: bool, all_screenshots: bool) -> Any:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps(VERDICT) + "\n")
    llm = ReplayClient(answers)
    calls: list[dict[str, Any]] = []
    llm.on_call = calls.append
    agent = EvaluationAgent(llm=llm, visual=visual, all_screenshots=all_screenshots)
    verdict = await agent.evaluate("add 2 and 3", [{"step": 1, "status": "FINISH"}], {}, screenshots=folder)
    assert verdict.complete == "yes" and len(calls) == 1
    return calls[0]["messages"][1]["content"]


def image_steps(content: list[dict[str, Any]]) -> list[int]:
    return [red_of(p["image_url"]["url"]) for p in content if p["type"] == "image_url"]


async def test_a_vision_judge_gets_every_step_screenshot_in_order(tmp_path: Path) -> None:
    folder = screenshots(tmp_path / "run", [1, 3, 4, 6])
    content = await user_content(tmp_path, folder, visual=True, all_screenshots=True)
    assert image_steps(content) == [1, 3, 4, 6]
    labels = [p["text"] for p in content if p["type"] == "text"]
    assert labels[0] == "Screenshot 1 (after step 1):" and "Request: add 2 and 3" in labels[-1]


async def test_with_eva_all_screenshots_false_only_the_first_and_last(tmp_path: Path) -> None:
    folder = screenshots(tmp_path / "run", [1, 3, 4, 6])
    content = await user_content(tmp_path, folder, visual=True, all_screenshots=False)
    assert image_steps(content) == [1, 6]


async def test_a_text_judge_gets_no_images(tmp_path: Path) -> None:
    folder = screenshots(tmp_path / "run", [1, 3])
    content = await user_content(tmp_path, folder, visual=False, all_screenshots=True)
    assert isinstance(content, str) and "Request: add 2 and 3" in content


def test_a_long_run_is_capped_keeping_the_first_and_last(tmp_path: Path) -> None:
    folder = screenshots(tmp_path / "run", list(range(1, 41)))
    chosen = [step for step, _ in chosen_screenshots(folder)]
    assert len(chosen) == MAX_IMAGES and chosen[0] == 1 and chosen[-1] == 40
    assert chosen == sorted(set(chosen))
    assert [s for s, _ in chosen_screenshots(folder, all_screenshots=False)] == [1, 40]
    # one round's verdict (EVA_ROUND): that round's steps' screenshots only
    assert [s for s, _ in chosen_screenshots(folder, steps={3, 5, 7})] == [3, 5, 7]
    assert [s for s, _ in chosen_screenshots(folder, all_screenshots=False, steps={3, 5, 7})] == [3, 7]
    (tmp_path / "empty").mkdir()
    assert chosen_screenshots(tmp_path / "empty") == []


def test_the_judge_is_visual_as_its_own_block_or_else_as_the_run_model() -> None:
    agent = EvaluationAgent(llm=None)
    run_only = StarweaveConfig.model_validate({"system": {"EVA_ALL_SCREENSHOTS": False}})
    configure_screenshots(agent, run_only, run_visual=True)
    assert agent.visual is True and agent.all_screenshots is False
    own = StarweaveConfig.model_validate({"EVALUATION_AGENT": {"API_TYPE": "openai", "VISUAL_MODE": False}})
    configure_screenshots(agent, own, run_visual=True)
    assert agent.visual is False and agent.all_screenshots is True


def test_desktop_steps_show_subtask_application_plan_and_output() -> None:
    host = {
        "step": 1,
        "status": "ASSIGN",
        "agent_name": "HostAgent",
        "subtask": "compute 2 + 3 in the calculator",
        "selected_application_root": "gnome-calculator",
        "function_name": "select_application_window",
        "function_arguments": {"id": "1", "name": "Calculator"},
        "output": "select_application_window on Window 'Calculator' -> success",
        "plan": ["read the display"],
    }
    app = {
        "step": 3,
        "status": "FINISH",
        "agent_name": "AppAgent/gnome-calculator",
        "application": "gnome-calculator",
        "observation": "the display shows 5",
        "thought": "done",
        "action": [{"function": "click_input", "arguments": {"id": "23", "name": "="}}],
        "output": "click_input on Button '=' -> success",
        "comment": "2 + 3 = 5",
        "result": "5",
    }
    text = trajectory_text([host, app])
    assert "Step 1 (status ASSIGN) HostAgent:" in text
    assert "subtask: compute 2 + 3 in the calculator" in text
    assert "application: gnome-calculator" in text
    assert 'select_application_window({"id": "1", "name": "Calculator"})' in text
    assert 'plan: ["read the display"]' in text
    assert "observation: the display shows 5" in text and "comment: 2 + 3 = 5" in text
    assert 'click_input({"id": "23", "name": "="})' in text
    assert "    click_input on Button '=' -> success" in text
