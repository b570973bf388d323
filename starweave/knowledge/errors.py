"""The knowledge package's error (its own module: the store and the vector code both raise it)."""

from __future__ import annotations

from starweave.errors import StarweaveError


class KnowledgeError(StarweaveError):
    """The knowledge store cannot be used (no FTS5 in this Python's SQLite, an unknown kind or id,
    an embedding model that fails)."""
