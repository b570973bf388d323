"""An action with no visible effect, on the real gnome-calculator under Xvfb, with replayed answers.

What the embedded model did on "subtract A from B": it typed "0" into the display again and again
until the repeat stop ended the subtask after 360 s. Now the next observation says that the last
action changed nothing the window shows, and the repeat is refused once (its note says so, and the
next answer may not use that tool; a model that insists anyway is stopped, see the unit tests).
With ``GUARDS: off`` the table is off: every repeat runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import calculator as calculator
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import (
    app,
    calculator_display,
    call,
    control_labels,
    host,
    launched_window,
    select,
    write_answers,
)
from rich.console import Console

from starweave.agents.app.effect import NO_EFFECT
from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import run_host_task
from starweave.session.runner import RunOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = pytest.mark.desktop

TIMEOUT = 120
SUBTASK = "Subtract 12 from 30 with the calculator."


async def run_host(tmp_path: Path, answers: list[dict[str, Any]]) -> dict[str, Any]:
    options = RunOptions(
        request="subtract 12 from 30 with the calculator that is open",
        workspace=tmp_path / "ws",
        provider="replay",
        replay_file=write_answers(tmp_path / "answers.jsonl", answers),
        log_dir=tmp_path / "logs",
        task="effect",
        auto_approve=False,
    )
    with (tmp_path / "console.txt").open("w") as out:
        return await run_host_task(options, ConsoleView(console=Console(file=out, width=120)))


def log_records(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    text = (tmp_path / "logs" / "effect" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def app_steps(tmp_path: Path) -> list[dict[str, Any]]:
    return [r for r in log_records(tmp_path, "response.log") if r.get("agent_type") == "AppAgent"]


async def typing_zero(backend: LinuxDesktopBackend) -> tuple[str, list[dict[str, Any]]]:
    """The calculator's window id, and the answers: 12, then "0" typed into the display four times."""
    window, name, xid = await launched_window(backend, "gnome-calculator")
    display = (await control_labels(backend, xid))[("Edit", "")]

    def typed(text: str) -> dict[str, Any]:
        return app("CONTINUE", call("set_edit_text", name="", id=display, text=text, clear_current_text=True))

    return xid, [select(window, name, SUBTASK), typed("12"), *[typed("0")] * 4]


async def test_an_action_that_changed_nothing_is_refused_once_and_its_tool_withheld(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        xid, answers = await typing_zero(desktop_backend)
        gave_up = app("FAIL", call(""), result="typing 0 changes nothing")
        result = await run_host(tmp_path, [*answers, gave_up, host("FAIL", result="it cannot be done")])

        assert await calculator_display(desktop_backend, xid) == "0"
        steps = app_steps(tmp_path)
        # 12 and the first "0" changed the display; the second "0" ran and changed nothing, so the
        # third is refused; the fourth, the same tool again, breaks the schema (the repeated tool
        # is withheld for one answer) and the model is asked again.
        assert [s["status"] for s in steps] == ["CONTINUE", "CONTINUE", "CONTINUE", "CONTINUE", "FAIL"]
        refused = steps[3]["output"]
        assert refused.startswith(
            "Not run: it is the same as the last step's action, and that changed nothing"
        )
        assert "Try another way" in refused and "skipped" in refused
        assert result["subtasks"][0]["status"] == "FAIL"
        assert result["subtasks"][0]["result"] == "typing 0 changes nothing"
        assert result["llm_calls"] == 8
        # The model was told what each action changed: the display, then nothing.
        app_prompts = [r["prompt"] for r in log_records(tmp_path, "request.log")][1:5]
        assert "After your last action: " in app_prompts[1][-1]["content"]
        assert NO_EFFECT in app_prompts[3][-1]["content"]


async def test_with_guards_off_an_action_that_changed_nothing_runs_again(
    tmp_path: Path,
    calculator: LaunchedApp,
    desktop_backend: LinuxDesktopBackend,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STARWEAVE_SYSTEM__GUARDS", "off")
    async with asyncio.timeout(TIMEOUT):
        xid, answers = await typing_zero(desktop_backend)
        # Not even a FINISH the display contradicts is refused: the table is off.
        finish = app("FINISH", call(""), result="30 - 12 = 18")
        result = await run_host(tmp_path, [*answers, finish, host("FINISH", result="18")])

        assert await calculator_display(desktop_backend, xid) == "0"
        steps = app_steps(tmp_path)
        assert [s["status"] for s in steps] == ["CONTINUE"] * 5 + ["FINISH"]
        assert not any("Not run" in s["output"] for s in steps)
        assert result["status"] == "FINISH" and result["subtasks"][0]["result"] == "30 - 12 = 18"
