"""The offline knowledge store: one SQLite database per kind (help documents, experience,
demonstrations), each in its own folder, searched lexically with FTS5's BM25 ranking.

A *document* (a help file, a saved run, a demonstration) is split into passages; a search returns the
best passages. User text never reaches FTS5 as query syntax: a query is cut into words, and each word
is quoted (see :func:`match_expression`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starweave.errors import StarweaveError
from starweave.knowledge.documents import split_passages

KINDS = ("docs", "experience", "demonstration")
DB_NAME = "knowledge.sqlite3"
MAX_QUERY_TERMS = 64
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    app TEXT,
    metadata TEXT NOT NULL,
    text TEXT NOT NULL,
    added REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    rowid INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    text, content='passages', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts(passages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
"""


class KnowledgeError(StarweaveError):
    """The knowledge store cannot be used (no FTS5 in this Python's SQLite, an unknown kind or id)."""


def default_root(env: Mapping[str, str] | None = None) -> Path:
    """Where the stores live: ``$STARWEAVE_KNOWLEDGE_DIR``, else ``$XDG_DATA_HOME/starweave/vectordb``
    (default ``~/.local/share/starweave/vectordb``): user data, so it survives reinstalls."""
    env = os.environ if env is None else env
    if env.get("STARWEAVE_KNOWLEDGE_DIR"):
        return Path(env["STARWEAVE_KNOWLEDGE_DIR"])
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "starweave" / "vectordb"


def match_expression(query: str, max_terms: int = MAX_QUERY_TERMS) -> str:
    """An FTS5 MATCH expression for free text: its words, each quoted, OR-ed (``""`` when it has none).

    Quoting makes every word a plain string, so ``AND``, ``NEAR(``, ``col:``, ``*`` or ``"`` in a
    request are searched for (or dropped, as punctuation), never interpreted."""
    terms = dict.fromkeys(word.lower() for word in _WORD.findall(query))
    return " OR ".join(f'"{term}"' for term in list(terms)[:max_terms])


def check_fts5() -> None:
    """Raise KnowledgeError when this Python's SQLite was built without FTS5."""
    with closing(sqlite3.connect(":memory:")) as db:
        try:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
        except sqlite3.OperationalError as exc:
            raise KnowledgeError(
                f"this Python's SQLite {sqlite3.sqlite_version} has no FTS5 ({exc}); "
                "install a Python whose sqlite3 module includes FTS5 to use the knowledge store"
            ) from exc


@dataclass(frozen=True)
class Hit:
    """One retrieved passage: its text, where it came from, its BM25 score (higher is better)."""

    text: str
    source: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    doc_id: str = ""
    app: str | None = None


@dataclass(frozen=True)
class DocumentInfo:
    """A stored document as ``learn list`` and ``learn show`` present it."""

    id: str
    kind: str
    source: str
    app: str | None
    metadata: dict[str, Any]
    passages: int
    added: float
    text: str = ""


class KnowledgeStore:
    """The store of one kind, in ``folder/knowledge.sqlite3``. Each call opens its own connection,
    so the store can be used from any thread (see :meth:`search_async`)."""

    def __init__(self, folder: Path, kind: str = "docs") -> None:
        self.folder = Path(folder)
        self.kind = kind
        self.path = self.folder / DB_NAME

    @contextmanager
    def _connect(self, create: bool = True) -> Iterator[sqlite3.Connection]:
        if create:
            self.folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path)
        try:
            db.execute("PRAGMA foreign_keys = ON")
            try:
                if create:  # reading needs no schema statements: a search stays a single query
                    db.executescript(_SCHEMA)
                with db:
                    yield db
            except sqlite3.OperationalError as exc:
                if "fts5" in str(exc).lower():
                    check_fts5()  # says why in one line, instead of "no such module: fts5"
                raise
        finally:
            db.close()

    def add(
        self,
        doc_id: str,
        text: str,
        source: str,
        app: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        split: bool = True,
    ) -> int:
        """Store (or replace) a document; returns its number of passages. ``split=False`` keeps it
        as one passage (a saved run, a demonstration)."""
        passages = split_passages(text) if split else ([text] if text.strip() else [])
        with self._connect() as db:
            self._insert(db, doc_id, text, source, app, metadata, passages)
        return len(passages)

    def add_many(self, documents: list[tuple[str, str, str, str | None, Mapping[str, Any]]]) -> int:
        """Store many ``(id, text, source, app, metadata)`` documents in one transaction; returns
        the number of passages."""
        count = 0
        with self._connect() as db:
            for doc_id, text, source, app, metadata in documents:
                passages = split_passages(text)
                self._insert(db, doc_id, text, source, app, metadata, passages)
                count += len(passages)
        return count

    @staticmethod
    def _insert(
        db: sqlite3.Connection,
        doc_id: str,
        text: str,
        source: str,
        app: str | None,
        metadata: Mapping[str, Any] | None,
        passages: list[str],
    ) -> None:
        db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        db.execute(
            "INSERT INTO documents(id, source, app, metadata, text, added) VALUES (?, ?, ?, ?, ?, ?)",
            (doc_id, source, app, json.dumps(dict(metadata or {}), default=str), text, time.time()),
        )
        db.executemany(
            "INSERT INTO passages(doc_id, n, text) VALUES (?, ?, ?)",
            [(doc_id, n, passage) for n, passage in enumerate(passages)],
        )

    def search(self, query: str, k: int = 5, app: str | None = None) -> list[Hit]:
        """The ``k`` passages that best match ``query`` (BM25), optionally only those of ``app``
        (matched case-insensitively). A query with no words, or an empty store, finds nothing."""
        expression = match_expression(query)
        if not expression or k <= 0 or not self.path.exists():
            return []
        sql = (
            "SELECT p.text, d.source, -bm25(passages_fts) AS score, d.metadata, d.id, d.app"
            " FROM passages_fts JOIN passages p ON p.rowid = passages_fts.rowid"
            " JOIN documents d ON d.id = p.doc_id WHERE passages_fts MATCH ?"
        )
        params: list[Any] = [expression]
        if app is not None:
            sql += " AND lower(d.app) = lower(?)"
            params.append(app)
        sql += " ORDER BY bm25(passages_fts) LIMIT ?"
        params.append(k)
        with self._connect(create=False) as db:
            rows = db.execute(sql, params).fetchall()
        return [
            Hit(text=t, source=s, score=float(sc), metadata=json.loads(m), doc_id=i, app=a)
            for t, s, sc, m, i, a in rows
        ]

    async def search_async(self, query: str, k: int = 5, app: str | None = None) -> list[Hit]:
        """:meth:`search` off the event loop (an agent's step must not wait on disk)."""
        return await asyncio.to_thread(self.search, query, k, app)

    def documents(self) -> list[DocumentInfo]:
        """Every stored document, oldest first (without its text)."""
        if not self.path.exists():
            return []
        with self._connect(create=False) as db:
            rows = db.execute(
                "SELECT d.id, d.source, d.app, d.metadata, d.added,"
                " (SELECT count(*) FROM passages p WHERE p.doc_id = d.id)"
                " FROM documents d ORDER BY d.added, d.id"
            ).fetchall()
        return [
            DocumentInfo(id=i, kind=self.kind, source=s, app=a, metadata=json.loads(m), passages=n, added=t)
            for i, s, a, m, t, n in rows
        ]

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The stored document ``doc_id`` with its text, or None."""
        if not self.path.exists():
            return None
        with self._connect(create=False) as db:
            row = db.execute(
                "SELECT d.source, d.app, d.metadata, d.added, d.text,"
                " (SELECT count(*) FROM passages p WHERE p.doc_id = d.id)"
                " FROM documents d WHERE d.id = ?",
                (doc_id,),
            ).fetchone()
        if row is None:
            return None
        source, app, metadata, added, text, count = row
        return DocumentInfo(doc_id, self.kind, source, app, json.loads(metadata), count, added, text)

    def forget(self, doc_id: str) -> bool:
        """Remove document ``doc_id`` and its passages; False when it was not stored."""
        if not self.path.exists():
            return False
        with self._connect(create=False) as db:
            return db.execute("DELETE FROM documents WHERE id = ?", (doc_id,)).rowcount > 0

    def forget_all(self) -> int:
        """Remove every document of this kind; returns how many there were."""
        if not self.path.exists():
            return 0
        with self._connect(create=False) as db:
            count = db.execute("DELETE FROM documents").rowcount
            db.execute("INSERT INTO passages_fts(passages_fts) VALUES ('optimize')")
        return int(count)


class KnowledgeBase:
    """The stores of every kind under one root: ``root/docs``, ``root/experience``,
    ``root/demonstration`` (the reference's ``vectordb/`` layout)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def store(self, kind: str) -> KnowledgeStore:
        """The store of ``kind`` (one of :data:`KINDS`)."""
        if kind not in KINDS:
            raise KnowledgeError(f"unknown knowledge kind {kind!r}; choose one of {', '.join(KINDS)}")
        return KnowledgeStore(self.root / kind, kind)

    def stores(self) -> list[KnowledgeStore]:
        """The store of every kind."""
        return [self.store(kind) for kind in KINDS]

    def find(self, doc_id: str) -> DocumentInfo | None:
        """Document ``doc_id`` in whichever store holds it, or None."""
        for store in self.stores():
            info = store.get(doc_id)
            if info is not None:
                return info
        return None
