"""Passage vectors for the semantic retriever, kept next to the passages they embed.

Vectors live in the store's own SQLite file (table ``vectors``, deleted with their passage), one
per passage, keyed by the passage's rowid alone: a store holds one model's vectors (each row names
its model), and passages added again with another model replace theirs. They are unit-length
float32 blobs; a search is a dot product over them with numpy (``pip install
'starweave[embeddings]'``). The lexical and the semantic rankings are merged by reciprocal rank
fusion, so a passage found both ways ranks first and a store with vectors for only some passages
still finds the others by their words.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starweave.knowledge.errors import KnowledgeError

SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    rowid INTEGER PRIMARY KEY REFERENCES passages(rowid) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_model ON vectors(model);
"""
#: Reciprocal rank fusion's constant (the usual 60): it keeps a first place in one ranking from
#: outweighing a good place in both.
RRF_K = 60

_cache_lock = threading.Lock()
# (database, model) -> (file signature, rowids, matrix): reading 10,000 vectors from SQLite costs
# far more than the search itself, so they are read once per change of the file.
_cache: dict[tuple[str, str], tuple[tuple[int, int], tuple[Any, Any, Any]]] = {}


def numpy() -> Any:
    """numpy, or a KnowledgeError saying how to install it."""
    try:
        import numpy as np
    except ImportError as exc:
        raise KnowledgeError(
            "semantic retrieval (RAG_EMBEDDING_MODEL) needs numpy: pip install 'starweave[embeddings]'"
        ) from exc
    return np


def unit_blobs(vectors: Sequence[Sequence[float]]) -> list[bytes]:
    """Each vector scaled to unit length, as float32 bytes (a zero vector stays zero)."""
    np = numpy()
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except ValueError as exc:  # vectors of different lengths, or not numbers
        raise KnowledgeError(f"the embedding model's vectors are not a matrix: {exc}") from exc
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1, norms)
    return [row.tobytes() for row in matrix]


def write_vectors(
    db: sqlite3.Connection, rowids: Sequence[int], vectors: Sequence[Sequence[float]], model: str
) -> None:
    """Store the vectors of the passages ``rowids`` (same order) for ``model``."""
    if len(rowids) != len(vectors):
        raise KnowledgeError(
            f"the embedding model {model} returned {len(vectors)} vectors for {len(rowids)} passages"
        )
    db.executemany(
        "INSERT OR REPLACE INTO vectors(rowid, model, vector) VALUES (?, ?, ?)",
        [(rowid, model, blob) for rowid, blob in zip(rowids, unit_blobs(vectors), strict=True)],
    )


def _matrix(db: sqlite3.Connection, path: Path, model: str) -> tuple[Any, Any, Any]:
    """(rowids, apps, matrix) of ``model``'s vectors, from the cache while the file is unchanged."""
    stat = path.stat()
    signature = (stat.st_mtime_ns, stat.st_size)
    key = (str(path), model)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1]
    np = numpy()
    rows = db.execute(
        "SELECT v.rowid, lower(p.app), v.vector FROM vectors v JOIN passages p ON p.rowid = v.rowid"
        " WHERE v.model = ? ORDER BY v.rowid",
        (model,),
    ).fetchall()
    rowids = np.asarray([row[0] for row in rows], dtype=np.int64)
    apps = np.asarray([row[1] for row in rows], dtype=object)
    try:
        matrix = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32).reshape(len(rows), -1)
    except ValueError as exc:  # stored vectors of different lengths
        raise KnowledgeError(f"the stored vectors of {model!r} differ in length: {exc}") from exc
    with _cache_lock:
        _cache[key] = (signature, (rowids, apps, matrix))
    return rowids, apps, matrix


def nearest(
    db: sqlite3.Connection, path: Path, model: str, query: Sequence[float], k: int, app: str | None = None
) -> list[int]:
    """The rowids of the ``k`` passages whose ``model`` vectors are closest to ``query`` (cosine),
    best first; only passages of ``app`` (case-insensitive) when it is given."""
    np = numpy()
    rowids, apps, matrix = _matrix(db, path, model)
    if not len(rowids):
        return []
    vector = np.frombuffer(unit_blobs([query])[0], dtype=np.float32)
    if vector.shape[0] != matrix.shape[1]:
        raise KnowledgeError(
            f"the query vector has {vector.shape[0]} numbers but the stored ones {matrix.shape[1]}: "
            f"was the store embedded with another model named {model!r}?"
        )
    scores = matrix @ vector
    if app is not None:
        scores = np.where(apps == app.lower(), scores, -np.inf)
    count = min(k, int(np.isfinite(scores).sum()))
    if count == 0:
        return []
    # Only the k best are ordered: a full sort of every score costs more than the product.
    best = np.argpartition(-scores, count - 1)[:count]
    return [int(rowids[i]) for i in best[np.argsort(-scores[best])]]


def fuse(rankings: Sequence[Sequence[int]], k: int) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of rowid rankings (each best first): the ``k`` best overall with their
    fused scores, best first (ties keep the first ranking's order)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for place, rowid in enumerate(ranking):
            scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (RRF_K + place + 1)
    return sorted(scores.items(), key=lambda item: -item[1])[:k]
