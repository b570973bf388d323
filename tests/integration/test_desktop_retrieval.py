"""Retrieval for an AppAgent's subtask on the real test desktop (Xvfb + AT-SPI): a help document
learned for gnome-calculator reaches the AppAgent's prompt, quoted, and changes its answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import calculator as calculator
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import (
    app,
    calculator_answers,
    calculator_display,
    control_labels,
    host,
    launched_window,
    select,
    write_answers,
)
from rich.console import Console

from starweave.knowledge import KnowledgeBase
from starweave.knowledge.retrieval import KNOWLEDGE_HEADER
from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import DesktopOptions, run_host_task
from starweave.session.runner import RunOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

HELP = "Calculator tip: to square a number, multiply it by itself: press the number, x, the number, then =."


async def test_an_app_help_document_changes_the_app_agents_answer(
    tmp_path: Path,
    calculator: LaunchedApp,
    desktop_backend: LinuxDesktopBackend,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "kb"))
    docs = KnowledgeBase(tmp_path / "kb").store("docs")
    docs.add("calc.md", HELP, "/help/calc.md", "gnome-calculator")
    docs.add(
        "other.md", "Editor tip: to square a paragraph, select it and press Format.", "/help/o.md", "mousepad"
    )
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "rag.yaml").write_text("RAG_OFFLINE_DOCS: true\n")
    async with asyncio.timeout(120):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        labels = await control_labels(desktop_backend, xid)
        clicks = calculator_answers(labels, ["4", "×", "4", "="], multi_action=True, result="4 squared is 16")
        answers = [
            select(window, name, "square 4 in the calculator"),
            {
                "$if_prompt_contains": "multiply it by itself",
                "then": clicks[0],
                "else": app("FAIL", [], "no idea"),
            },
            *clicks[1:],
            host("FINISH", result="4 squared is 16"),
        ]
        options = RunOptions(
            request="square 4 with the calculator",
            workspace=tmp_path / "ws",
            provider="replay",
            replay_file=write_answers(tmp_path / "answers.jsonl", answers),
            log_dir=tmp_path / "logs",
            task="desk",
            config_dir=tmp_path / "config",
        )
        with (tmp_path / "console.txt").open("w") as out:
            result = await run_host_task(
                options, ConsoleView(console=Console(file=out, width=120)), DesktopOptions(multi_action=True)
            )
        assert result["status"] == "FINISH", result
        assert await calculator_display(desktop_backend, xid) == "16"
    log = (tmp_path / "logs" / "desk" / "request.log").read_text(encoding="utf-8")
    requests = [json.loads(line) for line in log.splitlines() if line.strip()]
    app_prompt = json.dumps(next(r for r in requests if str(r.get("agent", "")).startswith("AppAgent")))
    assert json.dumps(f"{KNOWLEDGE_HEADER}\n[1] calc.md\n> {HELP}")[1:-1] in app_prompt
    assert "Editor tip" not in app_prompt
