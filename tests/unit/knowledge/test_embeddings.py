"""Semantic retrieval: passages embedded by an OpenAI-compatible endpoint (a real loopback HTTP
server whose vectors know a few synonyms) are found by meaning, merged with the lexical ranking."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from starweave.config.models import SystemConfig
from starweave.knowledge import KnowledgeBase, KnowledgeError, KnowledgeStore
from starweave.knowledge.configured import configured_embedder
from starweave.knowledge.embeddings import (
    EndpointEmbedder,
    LocalEmbedder,
    vectors_of,
)
from starweave.knowledge.vectors import fuse, unit_blobs
from tests.helpers.fake_openai_server import ScriptedServer, scripted_server

# Words of one meaning share a dimension; any other word gets one of its own (hashed).
MEANINGS = [
    {"spreadsheet", "excel", "workbook", "sheet"},
    {"total", "sum", "formula", "add"},
    {"text", "mousepad", "editor", "note"},
]
DIMENSIONS = 32


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        index = next((i for i, group in enumerate(MEANINGS) if word in group), None)
        vector[index if index is not None else len(MEANINGS) + sum(map(ord, word)) % 20] += 1.0
    return vector


def answer(request: dict[str, Any]) -> dict[str, Any]:
    data = [
        {"index": i, "embedding": embed(t), "object": "embedding"} for i, t in enumerate(request["input"])
    ]
    return {"object": "list", "data": list(reversed(data)), "model": request["model"]}


@pytest.fixture
def endpoint() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        server.responder = answer
        yield server


DOCS = {
    "excel": "Excel workbook: type =SUM(A1:A3) into a cell to get a formula result.",
    "mousepad": "Mousepad: press Ctrl+S to save the open file.",
}


def filled(tmp_path: Path, embedder: Any) -> KnowledgeStore:
    store = KnowledgeStore(tmp_path, "docs", embedder)
    store.add_many([(name, text, f"{name}.md", None, {}) for name, text in DOCS.items()])
    return store


def test_a_passage_is_found_by_meaning_when_no_word_matches(tmp_path: Path, endpoint: ScriptedServer) -> None:
    embedder = EndpointEmbedder(endpoint.base_url, "toy-embed", api_key="k-123")
    store = filled(tmp_path, embedder)
    assert KnowledgeStore(tmp_path, "docs").search("spreadsheet total") == []  # lexical: no shared word
    hits = store.search("spreadsheet total", k=1)
    assert [h.doc_id for h in hits] == ["excel"]
    assert hits[0].score > 0
    assert endpoint.requests[0]["model"] == "toy-embed"
    assert endpoint.headers[0]["Authorization"] == "Bearer k-123"


def test_lexical_and_semantic_rankings_are_merged(tmp_path: Path, endpoint: ScriptedServer) -> None:
    store = filled(tmp_path, EndpointEmbedder(endpoint.base_url, "toy-embed"))
    # "save" is a word of the mousepad passage; "sheet" means the excel one: both are found.
    assert {h.doc_id for h in store.search("save sheet", k=2)} == {"excel", "mousepad"}
    assert [h.doc_id for h in store.search("editor", k=1, app="nope")] == []


def test_a_failing_endpoint_leaves_the_lexical_search(
    tmp_path: Path, endpoint: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = filled(tmp_path, EndpointEmbedder(endpoint.base_url, "toy-embed"))
    endpoint.queue.append({"error": "overloaded"})
    endpoint.status = 500
    with caplog.at_level(logging.WARNING):
        assert [h.doc_id for h in store.search("save the file", k=1)] == ["mousepad"]
    assert "Semantic retrieval is off for this search" in caplog.text
    assert "answered 500" in caplog.text


def test_adding_fails_clearly_when_the_endpoint_is_down(tmp_path: Path) -> None:
    embedder = EndpointEmbedder("http://127.0.0.1:9/v1", "toy-embed", timeout=5)
    with pytest.raises(
        KnowledgeError, match=re.escape("embedding endpoint http://127.0.0.1:9/v1/embeddings")
    ):
        KnowledgeStore(tmp_path, "docs", embedder).add("a", "some text", "a.md")
    assert KnowledgeStore(tmp_path, "docs").documents() == []


def test_vectors_go_with_their_document(tmp_path: Path, endpoint: ScriptedServer) -> None:
    store = filled(tmp_path, EndpointEmbedder(endpoint.base_url, "toy-embed"))
    count = "SELECT count(*) FROM vectors"
    with sqlite3.connect(store.path) as db:
        assert db.execute(count).fetchone()[0] == 2
    store.forget("excel")
    with sqlite3.connect(store.path) as db:
        assert db.execute(count).fetchone()[0] == 1
    # A search after the change reads the vectors again: the forgotten passage is gone.
    assert [h.doc_id for h in store.search("spreadsheet total", k=2)] == ["mousepad"]


def test_malformed_answers_are_named() -> None:
    with pytest.raises(ValueError, match="expected 2 embeddings"):
        vectors_of({"data": [{"embedding": [1.0]}]}, 2)
    with pytest.raises(ValueError, match="not a list of numbers"):
        vectors_of({"data": [{"embedding": ["x"]}]}, 1)
    with pytest.raises(ValueError, match="differ in length"):
        vectors_of({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}, 2)
    assert vectors_of({"data": [{"index": 1, "embedding": [2]}, {"index": 0, "embedding": [1]}]}, 2) == [
        [1.0],
        [2.0],
    ]


def test_fusion_prefers_what_both_rankings_find() -> None:
    assert [r for r, _ in fuse([[1, 2, 3], [3, 4]], 3)] == [3, 1, 2]


def test_the_configuration_picks_the_embedder(tmp_path: Path) -> None:
    assert configured_embedder(SystemConfig()) is None
    endpoint = configured_embedder(
        SystemConfig(
            rag_embedding_model="nomic-embed-text",
            rag_embedding_api_base="http://127.0.0.1:11434/v1/",
            rag_embedding_api_key=SecretStr("s"),
        )
    )
    assert isinstance(endpoint, EndpointEmbedder)
    assert endpoint.url == "http://127.0.0.1:11434/v1/embeddings"
    local = configured_embedder(SystemConfig(rag_embedding_model=str(tmp_path / "missing.gguf")))
    assert isinstance(local, LocalEmbedder)
    with pytest.raises(KnowledgeError, match="is not a file"):
        local.embed(["x"])
    base = KnowledgeBase(tmp_path, endpoint)
    assert base.store("docs").embedder is endpoint


@pytest.mark.model
@pytest.mark.slow
def test_the_packaged_model_embeds_similar_requests_closer() -> None:
    embedder = LocalEmbedder("local")
    a, b, c = embedder.embed(
        ["count the csv files in the data folder", "how many csv files are in data", "play a song loudly"]
    )

    def cosine(x: list[float], y: list[float]) -> float:
        dot = sum(p * q for p, q in zip(x, y, strict=True))
        return dot / (sum(p * p for p in x) ** 0.5 * sum(q * q for q in y) ** 0.5)

    assert len(a) == len(c) > 100
    assert cosine(a, b) > cosine(a, c)


class InProcess:
    """An embedder without a server: the toy meanings above."""

    name = "toy-embed"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [embed(t) for t in texts]


def test_a_store_made_before_the_vectors_table_is_still_searched(tmp_path: Path) -> None:
    store = filled(tmp_path, None)
    with sqlite3.connect(store.path) as db:
        db.execute("DROP TABLE vectors")  # as a store made before semantic retrieval existed
    semantic = KnowledgeStore(tmp_path, "docs", InProcess())
    assert [h.doc_id for h in semantic.search("save the file", k=1)] == ["mousepad"]


class BrokenServer:
    """xllamacpp's server failing the way it does on bad input."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def handle_embeddings(self, request: dict[str, Any]) -> dict[str, Any]:
        raise self.error


@pytest.mark.parametrize("error", [RuntimeError("decode failed"), ValueError("bad input")])
def test_a_failing_local_model_is_a_knowledge_error(tmp_path: Path, error: Exception) -> None:
    local = LocalEmbedder("/nowhere/model.gguf")
    local._server = BrokenServer(error)
    with pytest.raises(KnowledgeError, match=re.escape(str(error))):
        local.embed(["some text"])
    store = filled(tmp_path, None)
    assert [h.doc_id for h in KnowledgeStore(tmp_path, "docs", local).search("save the file", k=1)] == [
        "mousepad"
    ]
    assert store.documents()


def test_ragged_vectors_are_a_knowledge_error() -> None:
    with pytest.raises(KnowledgeError, match="not a matrix"):
        unit_blobs([[1.0], [1.0, 2.0]])
