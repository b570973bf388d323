"""The stores as the configuration names them: the one place their folders and embedder are chosen,
so saving (``--save-experience``, ``learn``) and retrieval (the agents) always agree."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from starweave.config.models import SystemConfig
from starweave.knowledge.embeddings import Embedder, EndpointEmbedder, LocalEmbedder
from starweave.knowledge.store import KnowledgeBase, KnowledgeStore, default_root


def knowledge_base(system: SystemConfig | None, root: Path | None = None) -> KnowledgeBase:
    """The stores as configured: under ``root`` when given (``learn --store``), else each at its
    configured saved path (EXPERIENCE_SAVED_PATH, DEMONSTRATION_SAVED_PATH), else under the
    knowledge root (:func:`~starweave.knowledge.store.default_root`); with the configured embedder,
    if any. A relative saved path lies inside the knowledge root, never in the current directory
    (a run started elsewhere must find the same store)."""
    embedder = configured_embedder(system) if system is not None else None
    folders: dict[str, Path] = {}
    if system is not None and root is None:
        saved = {"experience": system.experience_saved_path, "demonstration": system.demonstration_saved_path}
        folders = {kind: default_root() / Path(path).expanduser() for kind, path in saved.items() if path}
    return KnowledgeBase(root, embedder, folders)


def open_store(system: SystemConfig | None, kind: str, root: Path | None = None) -> KnowledgeStore:
    """The store of ``kind`` as :func:`knowledge_base` places it."""
    return knowledge_base(system, root).store(kind)


def configured_embedder(system: SystemConfig) -> Embedder | None:
    """The embedder RAG_EMBEDDING_MODEL names, or None (lexical retrieval only). One per model for
    the process: a local model is loaded once, not at every request."""
    return _embedder(
        system.rag_embedding_model.strip(),
        system.rag_embedding_api_base,
        system.rag_embedding_api_key.get_secret_value(),
    )


@lru_cache(maxsize=4)
def _embedder(model: str, api_base: str, api_key: str) -> Embedder | None:
    if not model:
        return None
    if api_base:
        return EndpointEmbedder(api_base, model, api_key)
    return LocalEmbedder(model)
