"""Follower mode in the real mousepad under Xvfb: the user has the file open, the AppAgent follows
the plan's steps in that window (replay answers), and its FINISH ends the session.

A folder of two plans: the first follows its steps in the open window and saves; the second names
a window that is not open, which is that plan's error only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.desktop_env import DesktopSession, LaunchedApp
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import app, call, control_labels, launched_window, write_answers
from rich.console import Console

from starweave.session.batch import BatchRequest, run_batch
from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import DesktopOptions
from starweave.session.plans import RunMode
from starweave.session.runner import RunOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend
from starweave.tools.desktop.settle import apoll_until

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

TIMEOUT = 150


@pytest.fixture
def draft(tmp_path: Path, desktop_session: DesktopSession) -> Iterator[tuple[Path, LaunchedApp]]:
    """``draft.txt`` opened in mousepad by the user (here: the test) before the run."""
    path = tmp_path / "files" / "draft.txt"
    path.parent.mkdir()
    path.write_text("", encoding="utf-8")
    launched = desktop_session.launch("mousepad", str(path), position=(20, 420))
    yield path, launched
    desktop_session.stop(launched)


async def test_the_app_agent_follows_the_plan_in_the_open_mousepad(
    tmp_path: Path, draft: tuple[Path, LaunchedApp], desktop_backend: LinuxDesktopBackend
) -> None:
    path, _ = draft
    async with asyncio.timeout(TIMEOUT):
        _, _, xid = await launched_window(desktop_backend, "mousepad")
        edit = (await control_labels(desktop_backend, xid))[("Edit", "")]
        plans = tmp_path / "plans"
        plans.mkdir()
        follow = {
            "task": "Write a greeting into the draft",
            "steps": ["1. type 'Test For Fun' into the document", "2. save the file with Ctrl+S"],
            "object": "draft.txt",
        }
        (plans / "1_greet.json").write_text(json.dumps(follow), encoding="utf-8")
        absent = {**follow, "object": "minutes.txt"}
        (plans / "2_absent.json").write_text(json.dumps(absent), encoding="utf-8")
        replay = tmp_path / "replay"
        replay.mkdir()
        # Only AppAgent answers: the host does not ask its model which window to use.
        write_answers(
            replay / "1_greet.jsonl",
            [
                app("CONTINUE", call("set_edit_text", id=edit, name="", text="Test For Fun")),
                app("CONTINUE", call("keyboard_input", id=edit, name="", keys="^s")),
                app("FINISH", call("texts", id=edit, name=""), result="typed 'Test For Fun' and saved"),
            ],
        )
        write_answers(replay / "2_absent.jsonl", [])  # never asked: the window is not found
        options = RunOptions(
            request="",
            workspace=tmp_path / "ws",
            provider="replay",
            replay_file=replay,
            log_dir=tmp_path / "logs",
            task="follow",
        )
        with (tmp_path / "console.txt").open("w") as out:
            view = ConsoleView(console=Console(file=out, width=140))
            summary = await run_batch(
                options, view, BatchRequest(RunMode.FOLLOWER, plans, "host", DesktopOptions())
            )

        async def saved() -> str | None:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
            return text or None

        content = await apoll_until(saved, timeout=10)
        assert content is not None and content.rstrip("\n") == "Test For Fun", summary
        greet, missing = summary["plans"]
        assert greet["status"] == "FINISH", greet
        assert missing["status"] == "ERROR"
        assert "no open window matches the plan's object 'minutes.txt'" in missing["error"]
        assert "draft.txt" in missing["error"]  # the open windows are named
        result = json.loads((tmp_path / "logs" / "follow" / "1_greet" / "result.json").read_text())
        # The AppAgent's FINISH ended the session: no HostAgent model call, one subtask (the plan);
        # steps: the host's ASSIGN, three AppAgent steps, the AppAgent's FINISH (then the host ends).
        assert result["llm_calls"] == 3 and result["steps"] == 5
        (subtask,) = result["subtasks"]
        assert subtask["status"] == "FINISH" and subtask["application"] == "mousepad"
        assert "2. save the file with Ctrl+S" in subtask["subtask"]
        first = (tmp_path / "logs" / "follow" / "1_greet" / "request.log").read_text().splitlines()[0]
        # The AppAgent's first prompt shows the steps to follow.
        assert "1. type 'Test For Fun' into the document" in json.dumps(json.loads(first))
