"""The desktop agents' guards for a text-only model, on the real gnome-calculator under Xvfb.

Replays of what the embedded model did in issue 12: it clicked the label 1 (the Undo button)
meaning the digit 1, answered FINISH with "12 + 30 = 42" while the display was empty, and the
HostAgent assigned the "finished" subtask again and again. The whole ``starweave run --agent host``
wiring runs in process (run_host_task) with the replay provider; the checks read the calculator.
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
from helpers.desktop_env import mousepad as mousepad
from helpers.desktop_script import (
    app,
    calculator_display,
    call,
    click,
    control_labels,
    host,
    launched_window,
    select,
    write_answers,
)
from rich.console import Console

from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import run_host_task
from starweave.session.runner import RunOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = pytest.mark.desktop

TIMEOUT = 120
REQUEST = "compute 12 + 30 with the calculator that is open"
SUBTASK = "Compute 12 + 30 with the calculator."


async def run_host(tmp_path: Path, answers: list[dict[str, Any]], request: str = REQUEST) -> dict[str, Any]:
    options = RunOptions(
        request=request,
        workspace=tmp_path / "ws",
        provider="replay",
        replay_file=write_answers(tmp_path / "answers.jsonl", answers),
        log_dir=tmp_path / "logs",
        task="guard",
        auto_approve=False,
    )
    with (tmp_path / "console.txt").open("w") as out:
        return await run_host_task(options, ConsoleView(console=Console(file=out, width=120)))


def app_steps(tmp_path: Path) -> list[dict[str, Any]]:
    text = (tmp_path / "logs" / "guard" / "response.log").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [r for r in records if r.get("agent_type") == "AppAgent"]


def prompts(tmp_path: Path) -> list[list[dict[str, Any]]]:
    text = (tmp_path / "logs" / "guard" / "request.log").read_text(encoding="utf-8")
    return [json.loads(line)["prompt"] for line in text.splitlines() if line.strip()]


async def test_a_label_taken_for_a_digit_is_refused_and_the_model_told_the_right_id(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        labels = await control_labels(desktop_backend, xid)
        undo, one, two = labels[("Button", "Undo")], labels[("Button", "1")], labels[("Button", "2")]
        assert undo == "1" and one != "1"  # the trap: the label 1 is not the digit 1
        answers = [
            select(window, name, SUBTASK),
            app("CONTINUE", click(undo, "1")),  # what the model did: the label 1 for the digit 1
            app("CONTINUE", click(one, "1")),
            app("FINISH", click(two, "2"), result="The display shows 12"),
            host("FINISH", result="12"),
        ]
        result = await run_host(tmp_path, answers)

        assert await calculator_display(desktop_backend, xid) == "12"
        assert result["status"] == "FINISH", result
        refused, *_ = app_steps(tmp_path)
        assert "skipped" in refused["output"]
        assert f'id {undo} is Button "Undo", not "1"' in refused["output"]
        assert f'the control named "1" has id {one} (Button)' in refused["output"]
        # The model read the controls name first, with the id marked as one.
        first_app_prompt = prompts(tmp_path)[1]
        controls = first_app_prompt[-1]["content"]
        assert f'Button "1" (id {one})' in controls and f'Button "Undo" (id {undo})' in controls
        assert "[1]" not in controls


async def test_a_finish_the_display_contradicts_is_refused_until_the_calculation_is_done(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        display = (await control_labels(desktop_backend, xid))[("Edit", "")]
        answers = [
            select(window, name, SUBTASK),
            # The first answer must act (a text-only model's first FINISH is a guess): it reads the
            # display, and claims a result the display does not show.
            app("FINISH", call("texts", name="", id=display), result="12 + 30 = 42"),
            # Refused: the next answer is the verification step, a read of a control.
            app("CONTINUE", call("texts", name="", id=display)),
            app(
                "CONTINUE",
                call("set_edit_text", name="", id=display, text="12+30", clear_current_text=True),
            ),
            app("FINISH", call("keyboard_input", name="", id=display, keys="{ENTER}"), result="42"),
            host("FINISH", result="12 + 30 = 42"),
        ]
        result = await run_host(tmp_path, answers)

        assert await calculator_display(desktop_backend, xid) == "42"
        assert result["status"] == "FINISH" and result["result"] == "12 + 30 = 42", result
        refused, read, typed, finished = app_steps(tmp_path)
        assert refused["status"] == "CONTINUE" and read["status"] == "CONTINUE"
        assert refused["output"].startswith(
            "FINISH refused: the result '12 + 30 = 42' claims 42, which the window does not show"
        )
        assert f'Edit (id {display}) ""' in refused["output"]  # what the display really showed
        assert typed["status"] == "CONTINUE" and finished["status"] == "FINISH"
        assert result["subtasks"] == [
            {
                "agent_name": "AppAgent/gnome-calculator",
                "application": "gnome-calculator",
                "subtask": SUBTASK,
                "status": "FINISH",
                "result": "42",
            }
        ]


async def test_a_result_never_shown_ends_the_subtask_as_fail_and_the_host_stops_after_two_tries(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        display = (await control_labels(desktop_backend, xid))[("Edit", "")]
        undo = (await control_labels(desktop_backend, xid))[("Text", "Undo")]
        read, other = call("texts", name="", id=display), call("texts", name="Undo", id=undo)
        nothing = call("")
        # Two assignments of the same subtask, each claiming 42 three times over an empty display;
        # each refused claim is followed by the verification step (a read) the schema asks for.
        claims = [
            app("FINISH", read, "12 + 30 = 42"),
            app("CONTINUE", read),
            app("FINISH", nothing, "42"),
            app("CONTINUE", other),
            app("FINISH", nothing, "42"),
        ]
        answers = [select(window, name, SUBTASK), *claims, select(window, name, SUBTASK.lower()), *claims]
        answers.append(select(window, name, SUBTASK))  # a third assignment ends the round instead
        result = await run_host(tmp_path, answers)

        assert await calculator_display(desktop_backend, xid) == ""
        assert result["status"] == "FAIL", result
        assert [s["status"] for s in result["subtasks"]] == ["FAIL", "FAIL"]
        assert result["subtasks"][0]["result"].startswith("FINISH refused again: the result '42' claims 42")
        assert result["result"].startswith(f"The subtask {SUBTASK!r} failed 2 times on gnome-calculator")
        assert result["llm_calls"] == 13


async def test_a_subtask_that_finished_without_effect_is_not_assigned_again(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        display = (await control_labels(desktop_backend, xid))[("Edit", "")]
        answers = [
            select(window, name, SUBTASK),
            # Nothing checkable is claimed and nothing is changed: the subtask "finishes".
            app("FINISH", call("texts", name="", id=display), result="The calculation is done."),
            select(window, name, SUBTASK),  # refused once: the request may need something else
            select(window, name, SUBTASK),  # assigned yet again: the round ends
        ]
        result = await run_host(tmp_path, answers)

        assert result["status"] == "FAIL", result
        assert "'finished' on gnome-calculator without any action taking effect" in result["result"]
        assert "'The calculation is done.'" in result["result"]
        assert result["llm_calls"] == 4 and len(result["subtasks"]) == 1
        text = (tmp_path / "logs" / "guard" / "response.log").read_text(encoding="utf-8")
        hosts = [r for r in map(json.loads, text.splitlines()) if r.get("agent_type") == "HostAgent"]
        assert hosts[1]["status"] == "CONTINUE"
        assert hosts[1]["output"].startswith(f"Not assigned: the subtask {SUBTASK!r} is done already")


async def test_a_finish_with_the_text_not_written_or_the_file_not_saved_is_refused(
    tmp_path: Path, mousepad: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, _ = await launched_window(desktop_backend, "mousepad")
        subtask = "Write 'hello desktop' and save it as hello.txt"
        answers = [
            select(window, name, subtask),
            app("CONTINUE", call("open_file", path="hello.txt", create=True)),
            # What the model did: FINISH with the text it was asked for, nothing written.
            app("FINISH", call("read_document", path="hello.txt"), result="hello desktop"),
            # (A refusal never follows a refusal: the unsaved FINISH comes a step later.)
            app("CONTINUE", call("write_document", path="hello.txt", content="hello desktop")),
            app("FINISH", call("read_document", path="hello.txt"), result="written"),
            app("FINISH", call("save_file", path="hello.txt"), result="Saved 'hello desktop' as hello.txt"),
            host("FINISH", result="saved"),
        ]
        result = await run_host(tmp_path, answers, f"in mousepad, {subtask.lower()} in the workspace")

        assert (tmp_path / "ws" / "hello.txt").read_text(encoding="utf-8") == "hello desktop"
        assert result["status"] == "FINISH", result
        steps = app_steps(tmp_path)
        assert [s["status"] for s in steps] == ["CONTINUE", "CONTINUE", "CONTINUE", "CONTINUE", "FINISH"]
        assert steps[1]["output"].startswith(
            'FINISH refused: the subtask asks for "hello desktop", which neither the window nor your '
            "actions have"
        )
        assert steps[3]["output"].startswith("FINISH refused: ")
        assert "hello.txt has unsaved changes: save it with save_file" in steps[3]["output"]
        assert result["subtasks"][0]["result"] == "Saved 'hello desktop' as hello.txt"


async def test_with_guards_off_the_host_takes_a_bare_finish_and_a_repeated_subtask(
    tmp_path: Path,
    calculator: LaunchedApp,
    desktop_backend: LinuxDesktopBackend,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STARWEAVE_SYSTEM__GUARDS", "off")
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        display = (await control_labels(desktop_backend, xid))[("Edit", "")]
        answers = [
            select(window, name, SUBTASK),
            app("FINISH", call("texts", name="", id=display), result="The calculation is done."),
            select(window, name, SUBTASK),  # with the guards on: refused, then the round ends
            app("FINISH", call("texts", name="", id=display), result="The calculation is done."),
            host("FINISH", result="12 + 30 = 42"),
        ]
        result = await run_host(tmp_path, answers)
        assert result["status"] == "FINISH", result
        assert [s["status"] for s in result["subtasks"]] == ["FINISH", "FINISH"]
        assert result["llm_calls"] == 5
        (tmp_path / "bare").mkdir()
        bare = await run_host(tmp_path / "bare", [host("FINISH", result="12 + 30 = 42")])
        assert bare["status"] == "FINISH" and bare["llm_calls"] == 1  # not refused as unbacked
