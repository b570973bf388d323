"""HostAgent and AppAgent on the real test desktop (Xvfb + AT-SPI) with real GTK applications.

The whole ``starweave run --agent host`` wiring runs in process (run_host_task): the real UICollector /
HostUIExecutor / AppUIExecutor / TextEditorExecutor servers over the Linux backend, the local
dispatcher, the replay provider with answers in the agents' response schemas, and the session logs.
The tests check the applications' real state: the calculator's display, the file mousepad saved.
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
    calculator_answers,
    calculator_display,
    call,
    control_labels,
    host,
    launched_window,
    select,
    window_ids,
    write_answers,
)
from PIL import Image
from rich.console import Console

from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import DesktopOptions, run_host_task
from starweave.session.runner import RunOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend
from starweave.tools.desktop.settle import apoll_until

pytestmark = pytest.mark.desktop

TIMEOUT = 120


async def run_host(
    tmp_path: Path,
    answers: list[dict[str, Any]],
    request: str,
    multi_action: bool = False,
    visual: bool = False,
    **run: Any,
) -> dict[str, Any]:
    """The HostAgent run on ``answers``, logging to ``logs/desk``; ``run``: more RunOptions."""
    options = RunOptions(
        request=request,
        workspace=tmp_path / "ws",
        provider="replay",
        replay_file=write_answers(tmp_path / "answers.jsonl", answers),
        log_dir=tmp_path / "logs",
        task="desk",
        auto_approve=False,
        **run,
    )
    with (tmp_path / "console.txt").open("w") as out:
        view = ConsoleView(console=Console(file=out, width=120))
        return await run_host_task(options, view, DesktopOptions(multi_action=multi_action, visual=visual))


def read_log(tmp_path: Path) -> list[dict[str, Any]]:
    text = (tmp_path / "logs" / "desk" / "response.log").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def speculative_sum_answers(backend: LinuxDesktopBackend) -> tuple[list[dict[str, Any]], str]:
    """The answers of a run that adds 2 and 3 in the open calculator with one speculative
    AppAgent answer, and the calculator's window id."""
    window, name, xid = await launched_window(backend, "gnome-calculator")
    labels = await control_labels(backend, xid)
    answers = [
        select(window, name, "compute 2 + 3 in the calculator"),
        *calculator_answers(labels, ["2", "+", "3", "="], multi_action=True, result="2 + 3 = 5"),
        host("FINISH", result="2 + 3 = 5"),
    ]
    return answers, xid


async def test_host_selects_calculator_and_app_agent_adds_with_one_speculative_answer(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        answers, xid = await speculative_sum_answers(desktop_backend)
        result = await run_host(tmp_path, answers, "add 2 and 3 with the calculator", multi_action=True)

        assert await calculator_display(desktop_backend, xid) == "5"
        assert result["status"] == "FINISH", result
        assert result["result"] == "2 + 3 = 5"
        # Host, one speculative answer with four clicks, the answer that reads the display, host.
        assert result["llm_calls"] == 4
        assert result["subtasks"][0]["application"] == "gnome-calculator"
        assert result["subtasks"][0]["status"] == "FINISH"
        records = read_log(tmp_path)
        clicks = next(r for r in records if r.get("agent_type") == "AppAgent")
        assert clicks["multi_action"] is True and len(clicks["action"]) == 4
        report = [r for r in records if r.get("agent_type") == "AppAgent"][1]
        assert "summary" in report["output"] and report["status"] == "FINISH"
        # Every AppAgent step leaves the clean, annotated and selected-control screenshots.
        step = clicks["step"]
        folder = tmp_path / "logs" / "desk"
        clean = Image.open(folder / f"action_step{step}.png")
        annotated = Image.open(folder / f"action_step{step}_annotated.png")
        assert clean.size == annotated.size and clean.tobytes() != annotated.tobytes()
        assert (folder / f"action_step{step}_selected_controls.png").is_file()
        assert (folder / "action_step1.png").is_file()  # the HostAgent's desktop screenshot


async def test_app_agent_types_in_mousepad_and_saves_through_the_dialog(
    tmp_path: Path, mousepad: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "mousepad")
        labels = await control_labels(desktop_backend, xid)
        edit = labels[("Edit", "")]
        target = tmp_path / "saved.txt"
        answers = [
            select(window, name, "type 'hello from starweave' into the document and save it"),
            app("CONTINUE", call("set_edit_text", id=edit, name="", text="hello from starweave")),
            app("CONTINUE", call("keyboard_input", id=edit, name="", keys="^s")),
            # The Save As dialog has the focus: type the name into it, then press Enter.
            app("CONTINUE", call("keyboard_input", id=edit, name="", keys=str(target), control_focus=False)),
            app("CONTINUE", call("keyboard_input", id=edit, name="", keys="{ENTER}", control_focus=False)),
            app("FINISH", call("texts", id=edit, name=""), result=f"saved as {target}"),
            host("FINISH", result="note saved"),
        ]
        result = await run_host(tmp_path, answers, f"write 'hello from starweave' into {target}")

        saved = await apoll_until(lambda: _text(target), timeout=10)
        assert saved is not None and saved.rstrip("\n") == "hello from starweave", result
        assert result["status"] == "FINISH", result
        assert result["llm_calls"] == 7
        read = [r for r in read_log(tmp_path) if r.get("agent_type") == "AppAgent"][-1]
        assert "hello from starweave" in read["output"]


async def _text(path: Path) -> str | None:
    def read() -> str | None:
        return path.read_text(encoding="utf-8") if path.is_file() and path.stat().st_size else None

    return await asyncio.to_thread(read)


async def test_host_hands_over_to_calculator_then_mousepad_and_finishes(
    tmp_path: Path, calculator: LaunchedApp, mousepad: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        calc_window, calc_name, calc_xid = await launched_window(desktop_backend, "gnome-calculator")
        pad_window, pad_name, pad_xid = await launched_window(desktop_backend, "mousepad")
        calc = await control_labels(desktop_backend, calc_xid)
        edit = (await control_labels(desktop_backend, pad_xid))[("Edit", "")]
        answers = [
            select(calc_window, calc_name, "compute 7 + 8"),
            *calculator_answers(calc, ["7", "+", "8", "="], multi_action=True, result="15"),
            select(pad_window, pad_name, "write the result in mousepad and in result.txt"),
            # GUI and the editor's file API (hybrid actions) in one speculative answer.
            app(
                "FINISH",
                [
                    call("set_edit_text", id=edit, name="", text="7 + 8 = 15"),
                    call("texts", id=edit, name=""),
                    call("open_file", path="result.txt", create=True),
                    call("write_document", path="result.txt", content="7 + 8 = 15\n"),
                    call("save_file", path="result.txt"),
                ],
                result="written",
            ),
            host("FINISH", result="7 + 8 = 15, written"),
        ]
        result = await run_host(tmp_path, answers, "add 7 and 8, then write it down", multi_action=True)

        assert result["status"] == "FINISH", result
        assert await calculator_display(desktop_backend, calc_xid) == "15"
        pad_text = await desktop_backend.get_text(
            next(c for c in await desktop_backend.window_controls(pad_xid) if c.control_type == "Edit").id
        )
        assert pad_text == "7 + 8 = 15"
        assert (tmp_path / "ws" / "result.txt").read_text(encoding="utf-8") == "7 + 8 = 15\n"
        # Host → calculator → host → mousepad → host, each AppAgent sharing the host's Blackboard.
        assert [(s["application"], s["status"]) for s in result["subtasks"]] == [
            ("gnome-calculator", "FINISH"),
            ("mousepad", "FINISH"),
        ]
        agents = [r["agent_name"] for r in read_log(tmp_path) if r.get("agent_type")]
        assert agents[0] == "HostAgent" and agents[-1] == "HostAgent"
        assert "AppAgent/gnome-calculator" in agents and "AppAgent/mousepad" in agents
        assert agents.index("AppAgent/mousepad") > agents.index("AppAgent/gnome-calculator")
        assert result["llm_calls"] == 6


async def test_host_hands_the_calculators_result_to_the_third_party_linux_agent(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(TIMEOUT):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        labels = await control_labels(desktop_backend, xid)
        # Third-party agents are numbered after the windows get_desktop_app_info lists.
        linux_agent = str(len(await window_ids(desktop_backend)) + 1)
        write = call("write_file", path="answer.txt", content="6 × 7 = 42\n")
        answers = [
            select(window, name, "compute 6 × 7"),
            *calculator_answers(labels, ["6", "×", "7", "="], multi_action=True, result="42"),
            host("ASSIGN", "select_application_window", {"id": linux_agent, "name": "LinuxAgent"}, "save it"),
            # The LinuxAgent answers in its own schema and runs its own (shell and file) tools.
            {"observation": "", "thought": "", "action": {**write, "status": "CONTINUE"}, "result": ""},
            {
                "observation": "",
                "thought": "",
                "action": {"function": "", "arguments": {}, "status": "FINISH"},
                "result": "saved",
            },
            host("FINISH", result="6 × 7 = 42, saved in answer.txt"),
        ]
        result = await run_host(tmp_path, answers, "multiply 6 by 7 and save the answer", multi_action=True)

        assert result["status"] == "FINISH", result
        assert await calculator_display(desktop_backend, xid) == "42"
        assert (tmp_path / "ws" / "answer.txt").read_text(encoding="utf-8") == "6 × 7 = 42\n"
        assert [(s["application"], s["status"]) for s in result["subtasks"]] == [
            ("gnome-calculator", "FINISH"),
            ("LinuxAgent", "FINISH"),
        ]
        assert result["subtasks"][1]["result"] == "saved"
        agents = [r["agent_name"] for r in read_log(tmp_path) if r.get("agent_name")]
        assert agents.index("LinuxAgent") > agents.index("AppAgent/gnome-calculator")
        assert result["llm_calls"] == 7
