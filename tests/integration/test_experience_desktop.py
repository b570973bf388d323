"""A HostAgent run in the real mousepad (Xvfb + AT-SPI, replay answers) saved as experience with
SAVE_EXPERIENCE: always: the example holds the assignment and the AppAgent's actions, and the
application is the stored document's app, so an app-scoped search finds it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_env import mousepad as mousepad
from helpers.desktop_script import app, call, control_labels, host, launched_window, select
from integration.test_desktop_agents import run_host

from starweave.knowledge import KnowledgeBase
from starweave.knowledge.examples import examples_of
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = [pytest.mark.desktop, pytest.mark.slow]


async def test_a_host_run_is_saved_with_its_application(
    tmp_path: Path,
    mousepad: LaunchedApp,
    desktop_backend: LinuxDesktopBackend,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "vectordb"))
    # Saved by the settings (rag.yaml), not by --save-experience: no question, no terminal needed.
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "rag.yaml").write_text("RAG_EXPERIENCE: true\nSAVE_EXPERIENCE: always\n")
    monkeypatch.setenv("STARWEAVE_CONFIG_DIR", str(tmp_path / "config"))
    async with asyncio.timeout(120):
        window, name, xid = await launched_window(desktop_backend, "mousepad")
        edit = (await control_labels(desktop_backend, xid))[("Edit", "")]
        answers = [
            select(window, name, "type the shopping list into the document"),
            app("FINISH", call("set_edit_text", id=edit, name="", text="milk, eggs"), result="typed"),
            host("FINISH", result="the shopping list is typed"),
        ]
        result = await run_host(tmp_path, answers, "type my shopping list: milk, eggs")
    assert result["status"] == "FINISH", result
    console = (tmp_path / "console.txt").read_text()
    store = KnowledgeBase(tmp_path / "vectordb").store("experience")
    (document,) = store.documents()
    assert f"Experience saved: {document.id}" in console
    assert document.app == "mousepad"
    (example,) = examples_of(store.search("type a shopping list", app="mousepad"))
    assert example.agent == "host" and example.outcome == "the shopping list is typed"
    assert [s.action for s in example.steps][1] == f"set_edit_text(id='{edit}', text='milk, eggs')"
    assert store.search("type a shopping list", app="gnome-calculator") == []
