"""SAVE_EXPERIENCE: ask on a real pseudo-terminal, through the run's ConsoleView: "y" saves, Ctrl+D
is a no (no traceback), ``--no-ask`` asks nothing, and Ctrl+C (cancelling the run) stops the wait
at once instead of leaving a thread reading the terminal."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from starweave.config.models import SystemConfig
from starweave.knowledge import KnowledgeBase
from starweave.knowledge.saving import QUESTION, offer_experience
from starweave.session.console import ConsoleView

DATA = Path(__file__).parent / "data"
ASK = SystemConfig.model_validate({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "ask"})


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[int]:
    """stdin is the user side of a pseudo-terminal; yields the side the test types on."""
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "vectordb"))
    typist, user = os.openpty()
    stdin = os.fdopen(user, "r")
    monkeypatch.setattr(sys, "stdin", stdin)
    yield typist
    stdin.close()
    os.close(typist)


def _run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = (DATA / "linux_run" / "response.log").read_text().splitlines()
    return [json.loads(line) for line in lines], json.loads((DATA / "linux_run" / "result.json").read_text())


async def _offer(view: ConsoleView) -> str | None:
    records, result = _run()
    return await offer_experience(ASK, records, result, view)


def _view(ask: bool = True) -> tuple[ConsoleView, io.StringIO]:
    out = io.StringIO()
    return ConsoleView(Console(file=out, width=200), ask=ask), out


@pytest.mark.parametrize(("typed", "saved"), [(b"y\n", True), (b"no\n", False), (b"\x04", False)])
async def test_the_answer_typed_on_the_terminal_decides(
    terminal: int, tmp_path: Path, typed: bytes, saved: bool
) -> None:
    view, out = _view()
    os.write(terminal, typed)  # b"\x04" is Ctrl+D: end of input, a no
    doc_id = await _offer(view)
    assert QUESTION in out.getvalue()
    assert (doc_id is not None) is saved
    assert len(KnowledgeBase(tmp_path / "vectordb").store("experience").documents()) == int(saved)


async def test_no_ask_asks_nothing_even_on_a_terminal(terminal: int, tmp_path: Path) -> None:
    view, out = _view(ask=False)
    os.write(terminal, b"y\n")  # typed ahead: must not be read
    assert await _offer(view) is None
    assert QUESTION not in out.getvalue()
    assert "Experience not saved: --no-ask" in out.getvalue()
    assert KnowledgeBase(tmp_path / "vectordb").store("experience").documents() == []


def test_ctrl_c_while_asked_ends_the_run_at_once(terminal: int) -> None:
    """Ctrl+C cancels the main task; asyncio.run then returns without waiting for a typed line."""
    cancelled: list[bool] = []

    async def main() -> None:
        asked = asyncio.Event()

        class Watched(ConsoleView):
            async def prompt_line(self, prompt: str) -> str | None:
                asked.set()  # the question is on the terminal; the read starts
                return await super().prompt_line(prompt)

        task = asyncio.create_task(_offer(Watched(Console(file=io.StringIO()))))
        await asked.wait()
        await asyncio.sleep(0)  # into the read itself
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            cancelled.append(True)

    runner = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    runner.start()
    runner.join(timeout=20)
    alive = runner.is_alive()
    os.write(terminal, b"\n")  # lets a stuck reader go (so the old behaviour fails, not hangs)
    assert not alive and cancelled == [True]
