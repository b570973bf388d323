"""Retrieval into the LinuxAgent's prompt, end to end on recorded answers with the real shell tools:
a learned help document changes the answer (a conditional replay line), a saved experience is
retrieved for a similar request and not for an unrelated one; both quoted as data in request.log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.linux_replay import answer, prompts, run

from starweave.knowledge import KnowledgeBase
from starweave.knowledge.examples import Example, ExampleStep, save_example
from starweave.knowledge.retrieval import EXAMPLES_HEADER, KNOWLEDGE_HEADER

HELP = "Release notes: the release codename is kept in the file CODENAME; read it with cat CODENAME."
RETRIEVED = "> " + HELP


@pytest.fixture
def knowledge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "kb"))
    return KnowledgeBase(tmp_path / "kb")


def config_dir(tmp_path: Path, rag_yaml: str) -> Path:
    folder = tmp_path / "config"
    (folder / "ufo").mkdir(parents=True)
    (folder / "ufo" / "rag.yaml").write_text(rag_yaml)
    return folder


def codename_answers() -> list[Any]:
    # With the help document in the prompt the model reads the file it names; without it, it gives up.
    documented = {
        "$if_prompt_contains": "read it with cat CODENAME",
        "then": answer("cat CODENAME"),
        "else": answer(None, "FAIL", result="I do not know where the codename is kept."),
    }
    return [documented, answer(None, "FINISH", result="The release codename is Starling.")]


async def codename_run(tmp_path: Path, rag_yaml: str) -> dict[str, Any]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "CODENAME").write_text("Starling\n")
    return await run(
        tmp_path,
        codename_answers(),
        request="What is the release codename?",
        workspace=workspace,
        config_dir=config_dir(tmp_path, rag_yaml),
    )


async def test_a_learned_help_document_changes_the_answer(tmp_path: Path, knowledge: KnowledgeBase) -> None:
    knowledge.store("docs").add("release.md", HELP, str(tmp_path / "help" / "release.md"))
    result = await codename_run(tmp_path, "RAG_OFFLINE_DOCS: true\n")
    assert result["status"] == "FINISH", result
    assert result["result"] == "The release codename is Starling."
    first, second = prompts(tmp_path)
    request_message = first[1]["content"]
    # the passage is in the request's message, after the request, quoted under the data header
    assert request_message.index("What is the release codename?") < request_message.index(KNOWLEDGE_HEADER)
    assert f"{KNOWLEDGE_HEADER}\n[1] release.md\n{RETRIEVED}" in request_message
    assert second[1] == first[1]  # retrieved once per request, the same text at every step


async def test_without_rag_offline_docs_the_document_stays_out(
    tmp_path: Path, knowledge: KnowledgeBase
) -> None:
    knowledge.store("docs").add("release.md", HELP, "release.md")
    result = await codename_run(tmp_path, "RAG_OFFLINE_DOCS: false\n")
    assert result["status"] == "FAIL"
    assert "do not know" in result["result"]
    text = str(prompts(tmp_path)[0])
    # (the workspace listing names the file CODENAME: the document's text is what stays out)
    assert KNOWLEDGE_HEADER not in text and "release codename is kept" not in text


def counting_example() -> Example:
    return Example(
        request="count the lines of notes.txt",
        steps=[ExampleStep("wc counts lines", "execute_command wc -l notes.txt", "3 notes.txt")],
        outcome="notes.txt has 3 lines",
        agent="linux",
        source="experience",
    )


@pytest.mark.parametrize(
    ("request_text", "retrieved"),
    [("count the lines of todo.txt", True), ("print the current date", False)],
)
async def test_a_saved_experience_is_retrieved_for_a_similar_request_only(
    tmp_path: Path, knowledge: KnowledgeBase, request_text: str, retrieved: bool
) -> None:
    save_example(knowledge.store("experience"), counting_example())
    answers = [
        {
            "$if_prompt_contains": "> Request: count the lines of notes.txt",
            "then": answer("wc -l todo.txt", "CONTINUE"),
            "else": answer("date", "CONTINUE"),
        },
        answer(None, "FINISH", result="done as the output shows"),
    ]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "todo.txt").write_text("a\nb\n")
    await run(
        tmp_path,
        answers,
        request=request_text,
        workspace=workspace,
        config_dir=config_dir(tmp_path, "RAG_EXPERIENCE: true\nRAG_EXPERIENCE_RETRIEVED_TOPK: 2\n"),
    )
    system = prompts(tmp_path)[0][0]["content"]
    assert (EXAMPLES_HEADER in system) is retrieved
    if retrieved:
        rendered = "\n".join(f"> {line}" for line in counting_example().render().splitlines())
        assert f"{EXAMPLES_HEADER}\n[1]\n{rendered}" in system
    else:
        assert "notes.txt" not in system
