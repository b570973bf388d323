"""Embedding models for the optional semantic retriever (``RAG_EMBEDDING_MODEL``).

Two kinds, both behind :class:`Embedder`: an OpenAI-compatible ``/embeddings`` endpoint
(``RAG_EMBEDDING_API_BASE``: OpenAI, Ollama, vLLM, llama.cpp's server …) and a GGUF model run
in-process by xllamacpp (a file path, or ``local`` for the packaged chat model, which embeds
coarsely but needs nothing more). Without ``RAG_EMBEDDING_MODEL`` retrieval stays lexical (BM25).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

import httpx

from starweave.knowledge.errors import KnowledgeError

#: Texts per request: endpoints cap their input lists (OpenAI: 2,048), and a smaller batch keeps
#: one slow request from holding a long ``learn docs`` without progress.
BATCH = 64
ENDPOINT_TIMEOUT = 60.0
#: ``RAG_EMBEDDING_MODEL: local`` embeds with the packaged chat model.
PACKAGED = "local"
#: Tokens per text the local model reads: passages are ~200 words (knowledge.documents).
LOCAL_CONTEXT = 1024


class Embedder(Protocol):
    """Turns texts into vectors; ``name`` identifies the model, so vectors of different models are
    never compared."""

    name: str

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order. Blocking: the store calls it from a worker thread."""
        ...


class EndpointEmbedder:
    """An OpenAI-compatible ``POST {api_base}/embeddings``."""

    def __init__(
        self, api_base: str, model: str, api_key: str = "", timeout: float = ENDPOINT_TIMEOUT
    ) -> None:
        self.url = api_base.rstrip("/") + "/embeddings"
        self.name = f"{model}@{api_base.rstrip('/')}"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` in batches; any failure is a KnowledgeError naming the endpoint."""
        vectors: list[list[float]] = []
        with httpx.Client(timeout=self._timeout, headers=self._headers) as client:
            for start in range(0, len(texts), BATCH):
                vectors.extend(self._batch(client, texts[start : start + BATCH]))
        return vectors

    def _batch(self, client: httpx.Client, texts: list[str]) -> list[list[float]]:
        try:
            response = client.post(self.url, json={"model": self._model, "input": texts})
        except httpx.HTTPError as exc:
            raise KnowledgeError(f"embedding endpoint {self.url}: {exc or type(exc).__name__}") from exc
        if response.status_code != 200:
            body = " ".join(response.text.split())[:200]
            raise KnowledgeError(f"embedding endpoint {self.url} answered {response.status_code}: {body}")
        try:
            return vectors_of(response.json(), len(texts))
        except ValueError as exc:
            raise KnowledgeError(f"embedding endpoint {self.url}: {exc}") from exc


def vectors_of(answer: Any, expected: int) -> list[list[float]]:
    """The vectors of an OpenAI-format embeddings answer, in input order (``index``); a ValueError
    says what is wrong with a malformed one."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        raise ValueError(f"expected {expected} embeddings in 'data', got {answer!r:.200}")
    ordered = sorted(data, key=lambda item: item.get("index", 0) if isinstance(item, dict) else 0)
    vectors: list[list[float]] = []
    for item in ordered:
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(vector, list) or not vector or not all(isinstance(x, int | float) for x in vector):
            raise ValueError(f"an embedding is not a list of numbers: {item!r:.200}")
        vectors.append([float(x) for x in vector])
    if len({len(v) for v in vectors}) > 1:
        raise ValueError("the embeddings differ in length")
    return vectors


class LocalEmbedder:
    """A GGUF model in this process (xllamacpp, mean pooling), loaded on first use."""

    def __init__(self, model: str, n_threads: int = 2) -> None:
        self._model = model
        self.name = "local" if model == PACKAGED else Path(model).name
        self._n_threads = n_threads
        self._server: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        try:
            import xllamacpp
        except ImportError as exc:
            raise KnowledgeError(
                "RAG_EMBEDDING_MODEL names a local model, but xllamacpp is not installed; "
                "run: pip install 'starweave[local]'"
            ) from exc
        from starweave.llm.providers.local_model import ensure_model

        path = ensure_model() if self._model == PACKAGED else Path(self._model).expanduser()
        if not path.is_file():
            raise KnowledgeError(
                f"RAG_EMBEDDING_MODEL {self._model!r} is not a file; name a GGUF model, or 'local'"
            )
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.embedding = True
        params.pooling_type = type(params.pooling_type).LLAMA_POOLING_TYPE_MEAN
        params.n_ctx = LOCAL_CONTEXT
        params.n_batch = params.n_ubatch = LOCAL_CONTEXT  # one passage is embedded in one batch
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = self._n_threads
        params.verbosity = 0
        try:
            return xllamacpp.Server(params)
        except (RuntimeError, ValueError) as exc:
            raise KnowledgeError(f"the embedding model {path} could not be loaded: {exc}") from exc

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` with the local model (one call at a time: the model is not reentrant)."""
        with self._lock:
            if self._server is None:
                self._server = self._load()
            vectors: list[list[float]] = []
            for start in range(0, len(texts), BATCH):
                batch = texts[start : start + BATCH]
                try:
                    answer = self._server.handle_embeddings({"input": batch, "model": self.name})
                    if isinstance(answer, dict) and "error" in answer:
                        raise ValueError(str(answer["error"]))
                    vectors.extend(vectors_of(answer, len(batch)))
                except (RuntimeError, ValueError) as exc:  # xllamacpp raises both on bad input
                    raise KnowledgeError(f"the embedding model {self.name}: {exc}") from exc
            return vectors
