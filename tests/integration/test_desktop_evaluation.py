"""The EvaluationAgent after a HostAgent/AppAgent run on the real test desktop (Xvfb + AT-SPI).

The run and its judge answer from one replay file (the judge's verdict is the line after the run's
answers). The verdict goes to evaluation.log in the reference's shape; a judge on a vision model
sees the run's screenshots (here the first and the last, EVA_ALL_SCREENSHOTS: false), a text one
none, and both see the desktop trajectory: subtask, application, actions and their outputs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import calculator as calculator
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import (
    host,
)
from helpers.evaluation import RECORD_KEYS, evaluation_log, verdict
from helpers.evaluation import judged as judged
from integration.test_desktop_agents import run_host, speculative_sum_answers

from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

TIMEOUT = 120


async def run_judged(
    tmp_path: Path, answers: list[dict[str, Any]], request: str, system_yaml: str = "", **options: Any
) -> dict[str, Any]:
    """``run_host`` with ``system_yaml`` as the configuration's system.yaml."""
    config = tmp_path / "config"
    (config / "ufo").mkdir(parents=True)
    (config / "ufo" / "system.yaml").write_text(system_yaml or "{}\n")
    return await run_host(tmp_path, answers, request, config_dir=config, **options)


def evaluation_records(tmp_path: Path) -> list[dict[str, Any]]:
    return evaluation_log(tmp_path / "logs" / "desk")


async def test_a_passing_calculator_run_is_judged_yes_by_a_vision_judge_on_first_and_last_screenshots(
    tmp_path: Path,
    calculator: LaunchedApp,
    desktop_backend: LinuxDesktopBackend,
    judged: list[list[dict[str, Any]]],
) -> None:
    async with asyncio.timeout(TIMEOUT):
        answers, _ = await speculative_sum_answers(desktop_backend)
        answers.append(verdict("yes", "the calculator shows 5", "2 + 3 computed"))
        result = await run_judged(
            tmp_path,
            answers,
            "add 2 and 3 with the calculator",
            # EVA_SESSION in the configuration turns the judge on; --visual makes the run's model a
            # vision model, which the judge then is too.
            system_yaml="EVA_SESSION: true\nEVA_ALL_SCREENSHOTS: false\n",
            multi_action=True,
            visual=True,
        )
    assert result["status"] == "FINISH", result
    records = evaluation_records(tmp_path)
    assert len(records) == 1 and list(records[0]) == RECORD_KEYS
    assert records[0]["complete"] == "yes" and records[0]["level"] == "session"
    assert records[0]["request"] == "add 2 and 3 with the calculator"
    assert records[0]["type"] == "evaluation_result"
    # The judge saw the first and the last step screenshot of the run, and the desktop trajectory.
    folder = tmp_path / "logs" / "desk"
    names = (re.fullmatch(r"action_step(\d+)\.png", p.name) for p in folder.iterdir())
    steps = sorted(int(m.group(1)) for m in names if m is not None)
    assert len(steps) >= 3
    content = judged[0][1]["content"]
    urls = [part["image_url"]["url"] for part in content if part["type"] == "image_url"]
    expected = [folder / f"action_step{steps[0]}.png", folder / f"action_step{steps[-1]}.png"]
    assert urls == [f"data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}" for p in expected]
    text = content[-1]["text"]
    assert "subtask: compute 2 + 3 in the calculator" in text and "application: gnome-calculator" in text
    assert "click_input" in text and "Final status: FINISH" in text
    console = " ".join((tmp_path / "console.txt").read_text().split())
    assert "first and last screenshots" in console and "complete yes" in console
    assert json.loads((folder / "result.json").read_text())["status"] == "FINISH"


async def test_a_failing_run_is_judged_no_by_a_text_judge_without_images(
    tmp_path: Path, desktop_session: Any, judged: list[list[dict[str, Any]]]
) -> None:
    answers = [
        host("FAIL", result="no spreadsheet application is open"),
        verdict("no", "no application was used; nothing was computed"),
    ]
    result = await asyncio.wait_for(
        run_judged(tmp_path, answers, "sum column A in the spreadsheet", evaluate=True), TIMEOUT
    )
    assert result["status"] == "FAIL", result
    records = evaluation_records(tmp_path)
    assert [r["complete"] for r in records] == ["no"] and list(records[0]) == RECORD_KEYS
    assert (tmp_path / "logs" / "desk" / "action_step1.png").is_file()  # screenshots exist, yet:
    content = judged[0][1]["content"]
    assert isinstance(content, str) and "Final status: FAIL" in content
    assert "complete no" in " ".join((tmp_path / "console.txt").read_text().split())
