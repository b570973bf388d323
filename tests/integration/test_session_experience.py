"""What a LinuxAgent run on recorded answers leaves in the experience store: only a one-round run,
and only as ``result.json`` holds it (secrets removed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.linux_replay import answer, run
from integration.test_ask_user import config_dir

from starweave.knowledge import KnowledgeBase

KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90KlMn"


@pytest.fixture(autouse=True)
def knowledge_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "kb"
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(folder))
    return folder


def saved(knowledge_dir: Path) -> list[str]:
    """The saved experience documents, as JSON text."""
    store = KnowledgeBase(knowledge_dir).store("experience")
    return [json.dumps(document.__dict__, default=str) for document in store.documents()]


async def test_a_key_in_the_request_never_reaches_the_experience_store(
    tmp_path: Path, knowledge_dir: Path
) -> None:
    answers = [answer("echo ok > ok.txt"), answer(None, "FINISH", result="done")]
    result = await run(tmp_path, answers, request=f"use the key {KEY} to write ok.txt", save_experience=True)
    assert result["status"] == "FINISH"
    (document,) = saved(knowledge_dir)
    assert KEY not in document and "write ok.txt" in document


async def test_a_session_of_several_rounds_is_not_saved(tmp_path: Path, knowledge_dir: Path) -> None:
    answers = [answer(None, "FINISH", result="one"), answer(None, "FINISH", result="two")]
    config = config_dir(tmp_path, MAX_ROUND=2)
    result = await run(
        tmp_path, answers, request="first", config_dir=config, typed=["second"], save_experience=True
    )
    assert result["status"] == "FINISH" and result["rounds"] == 2
    assert saved(knowledge_dir) == []
    assert "the session ran 2 rounds" in (tmp_path / "console.txt").read_text()
