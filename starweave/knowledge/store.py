"""The offline knowledge store: one SQLite database per kind (help documents, experience,
demonstrations), each in its own folder, searched lexically with FTS5's BM25 ranking.

A *document* (a help file, a saved run, a demonstration) is split into passages; a search returns the
best passages. User text never reaches FTS5 as query syntax: a query is cut into words, and each word
is quoted (see :func:`match_expression`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starweave.knowledge import vectors
from starweave.knowledge.documents import split_passages
from starweave.knowledge.errors import KnowledgeError

if TYPE_CHECKING:
    from starweave.knowledge.embeddings import Embedder

log = logging.getLogger(__name__)

KINDS = ("docs", "experience", "demonstration")
DATA_DIR_ENV = "STARWEAVE_DATA_DIR"
DB_NAME = "knowledge.sqlite3"
MAX_QUERY_TERMS = 64
# A query word found in more than this share of the passages is searched for only when the query has
# no rarer word: BM25 weighs it little (its IDF is small), yet it would make most passages candidates
# to rank, and ranking the candidates is what a search spends its time on (measured: 22 -> 7 ms
# median at 10,000 documents, benchmarks/knowledge_bench.py). Below MIN_PASSAGES_TO_PRUNE passages
# every word is kept, as shares of a small store say little.
COMMON_SHARE = 0.2
# A word found in more than this share of the passages has a BM25 weight of about zero (FTS5 clamps
# its IDF to 1e-6): a query made only of such words ranks nothing, so its passages are not ranked.
NO_WEIGHT_SHARE = 0.5
MIN_PASSAGES_TO_PRUNE = 200
WORD = re.compile(r"\w+", re.UNICODE)
# Words too common to tell passages apart: BM25 gives them almost no weight, yet each one would make
# every passage a candidate to rank (the cost of a search grows with the candidates).
STOPWORDS = frozenset(
    [
        "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
        "before", "but", "by", "can", "could", "do", "does", "for", "from", "had", "has", "have",
        "how", "i", "if", "in", "into", "is", "it", "its", "me", "more", "my", "no", "not", "of",
        "on", "only", "or", "other", "our", "should", "so", "some", "than", "that", "the", "their",
        "them", "then", "there", "these", "they", "this", "those", "to", "up", "us", "use",
        "using", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why",
        "will", "with", "would", "you", "your",
    ]
)  # fmt: skip

_SCHEMA = (
    """
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
    text TEXT NOT NULL,
    app TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    text, app, content='passages', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts(rowid, text, app) VALUES (new.rowid, new.text, new.app);
END;
CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts(passages_fts, rowid, text, app) VALUES ('delete', old.rowid, old.text, old.app);
END;
"""
    + vectors.SCHEMA
)


def data_root(env: Mapping[str, str] | None = None) -> Path:
    """Starweave's data folder: ``$STARWEAVE_DATA_DIR``, else ``$XDG_DATA_HOME/starweave`` (default
    ``~/.local/share/starweave``): user data, so it survives reinstalls."""
    env = os.environ if env is None else env
    if env.get(DATA_DIR_ENV):
        return Path(env[DATA_DIR_ENV]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "starweave"


def default_root(env: Mapping[str, str] | None = None) -> Path:
    """Where the stores live: ``$STARWEAVE_KNOWLEDGE_DIR``, else ``vectordb`` in the data folder
    (:func:`data_root`)."""
    env = os.environ if env is None else env
    if env.get("STARWEAVE_KNOWLEDGE_DIR"):
        return Path(env["STARWEAVE_KNOWLEDGE_DIR"]).expanduser()
    return data_root(env) / "vectordb"


def match_expression(query: str, max_terms: int = MAX_QUERY_TERMS) -> str:
    """An FTS5 MATCH expression for free text: its words, each quoted, OR-ed (``""`` when it has none).
    Common English words are left out unless the query has nothing else.

    Quoting makes every word a plain string, so ``AND``, ``NEAR(``, ``col:``, ``*`` or ``"`` in a
    request are searched for (or dropped, as punctuation), never interpreted."""
    words = dict.fromkeys(word.lower() for word in WORD.findall(query))
    terms = [word for word in words if word not in STOPWORDS] or list(words)
    return " OR ".join(f'"{term}"' for term in terms[:max_terms])


def _app_phrase(app: str) -> str:
    """The FTS5 phrase matching an app name's words in the ``app`` column (quoted, never syntax)."""
    return '"' + " ".join(word.lower() for word in WORD.findall(app)) + '"'


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


def _search_sql(ranked: bool, by_app: bool) -> str:
    """The search query: the best (or, unranked, the first) passages inside FTS5, then the join to
    their documents for only those few (joining every candidate costs more)."""
    order = "ORDER BY rank " if ranked else ""
    sql = (
        "SELECT p.text, d.source, -r.score, d.metadata, d.id, d.app, p.rowid FROM"
        f" (SELECT rowid, rank AS score FROM passages_fts WHERE passages_fts MATCH ? {order}LIMIT ?) r"
        " JOIN passages p ON p.rowid = r.rowid JOIN documents d ON d.id = p.doc_id"
    )
    if by_app:
        # The app's words narrow the candidates inside FTS5 (an index lookup, not a scan); the
        # exact name is checked here, so "gimp" does not take "gimp-help"'s passages.
        sql += " WHERE lower(d.app) = lower(?)"
    return sql + " ORDER BY r.score LIMIT ?"


class KnowledgeStore:
    """The store of one kind, in ``folder/knowledge.sqlite3``. Each call opens its own connection,
    so the store can be used from any thread (see :meth:`search_async`).

    With an ``embedder`` (``RAG_EMBEDDING_MODEL``), added passages are embedded too, and a search
    merges the semantic ranking with the lexical one (:mod:`starweave.knowledge.vectors`)."""

    def __init__(self, folder: Path, kind: str = "docs", embedder: Embedder | None = None) -> None:
        self.folder = Path(folder)
        self.kind = kind
        self.path = self.folder / DB_NAME
        self.embedder = embedder

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
        embedded = self._embed(passages)
        with self._connect() as db:
            rowids = self._insert(db, doc_id, text, source, app, metadata, passages)
            self._write_vectors(db, rowids, embedded)
        return len(passages)

    def add_many(self, documents: list[tuple[str, str, str, str | None, Mapping[str, Any]]]) -> int:
        """Store many ``(id, text, source, app, metadata)`` documents in one transaction; returns
        the number of passages."""
        split = [split_passages(text) for _, text, _, _, _ in documents]
        # Embedded before the transaction: a slow model must not hold the database locked.
        embedded = self._embed([passage for passages in split for passage in passages])
        rowids: list[int] = []
        with self._connect() as db:
            for (doc_id, text, source, app, metadata), passages in zip(documents, split, strict=True):
                rowids += self._insert(db, doc_id, text, source, app, metadata, passages)
            self._write_vectors(db, rowids, embedded)
        return len(rowids)

    def _embed(self, passages: list[str]) -> list[list[float]] | None:
        if self.embedder is None or not passages:
            return None
        return self.embedder.embed(passages)

    def _write_vectors(
        self, db: sqlite3.Connection, rowids: list[int], embedded: list[list[float]] | None
    ) -> None:
        if self.embedder is not None and embedded is not None:
            vectors.write_vectors(db, rowids, embedded, self.embedder.name)

    @staticmethod
    def _insert(
        db: sqlite3.Connection,
        doc_id: str,
        text: str,
        source: str,
        app: str | None,
        metadata: Mapping[str, Any] | None,
        passages: list[str],
    ) -> list[int]:
        db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        db.execute(
            "INSERT INTO documents(id, source, app, metadata, text, added) VALUES (?, ?, ?, ?, ?, ?)",
            (doc_id, source, app, json.dumps(dict(metadata or {}), default=str), text, time.time()),
        )
        insert = "INSERT INTO passages(doc_id, n, text, app) VALUES (?, ?, ?, ?)"
        return [
            int(db.execute(insert, (doc_id, n, passage, app or "")).lastrowid or 0)
            for n, passage in enumerate(passages)
        ]

    def search(self, query: str, k: int = 5, app: str | None = None) -> list[Hit]:
        """The ``k`` passages that best match ``query`` (BM25, merged with the semantic ranking
        when the store has an embedder), optionally only those of ``app`` (matched
        case-insensitively). A query with no words, or an empty store, finds nothing."""
        if k <= 0 or not self.path.exists() or (app is not None and not WORD.search(app)):
            return []
        with self._connect(create=False) as db:
            if self.embedder is None:
                rows = self._lexical(db, query, k, app)
            else:
                rows = self._fused(db, query, k, app, self.embedder)
        return [
            Hit(text=t, source=s, score=float(sc), metadata=json.loads(m), doc_id=i, app=a)
            for t, s, sc, m, i, a, _ in rows
        ]

    def _fused(
        self, db: sqlite3.Connection, query: str, k: int, app: str | None, embedder: Embedder
    ) -> list[Any]:
        """Both rankings (twice ``k`` deep each) merged; when the model fails, or the store has no
        vectors table (made before one existed, and only read since), the lexical one alone (a
        search must not fail because an embedding endpoint is down)."""
        lexical = self._lexical(db, query, 2 * k, app)
        try:
            (vector,) = embedder.embed([query])
            semantic = vectors.nearest(db, self.path, embedder.name, vector, 2 * k, app)
        except (KnowledgeError, sqlite3.Error) as exc:
            log.warning("Semantic retrieval is off for this search: %s", exc)
            return lexical[:k]
        by_rowid = {row[-1]: row for row in lexical}
        missing = [rowid for rowid in semantic if rowid not in by_rowid]
        if missing:
            found = db.execute(
                "SELECT p.text, d.source, 0.0, d.metadata, d.id, d.app, p.rowid FROM passages p"
                f" JOIN documents d ON d.id = p.doc_id WHERE p.rowid IN ({','.join('?' * len(missing))})",
                missing,
            ).fetchall()
            by_rowid.update({row[-1]: row for row in found})
        # The fused score replaces BM25's: it is what the order follows.
        fused = vectors.fuse([[row[-1] for row in lexical], semantic], k)
        return [(*by_rowid[r][:2], score, *by_rowid[r][3:]) for r, score in fused]

    def _lexical(self, db: sqlite3.Connection, query: str, k: int, app: str | None) -> list[Any]:
        """The BM25 search: rows of (text, source, score, metadata, doc id, app, rowid)."""
        expression = match_expression(query)
        rows: list[Any] = []
        if expression:
            for candidate, ranked in self._expressions(db, expression):
                sql = _search_sql(ranked, app is not None)
                if app is None:
                    params: list[Any] = [candidate, k, k]
                else:
                    scoped = f"{{text}} : ({candidate}) AND {{app}} : {_app_phrase(app)}"
                    params = [scoped, k * 4, app, k]
                rows = db.execute(sql, params).fetchall()
                if len(rows) >= k:
                    break
        return rows

    @staticmethod
    def _expressions(db: sqlite3.Connection, expression: str) -> list[tuple[str, bool]]:
        """The MATCH expressions to try in turn until one finds enough passages: ``expression``
        without its common words (see COMMON_SHARE) when it has rarer ones; when every word is
        common, first the passages holding all of them (few, and the best BM25 would pick), then
        those holding the two rarest, then those holding either (every word common means every
        word weighs little, so the rarest ones decide). Each comes with whether to rank by BM25:
        not when every word is in more than NO_WEIGHT_SHARE of the passages (BM25 weighs them 0)."""
        terms = expression.split(" OR ")
        if len(terms) < 2:
            return [(expression, True)]
        total = db.execute("SELECT count(*) FROM passages").fetchone()[0]
        if total < MIN_PASSAGES_TO_PRUNE:
            return [(expression, True)]
        count = "SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?"
        shares = {t: db.execute(count, (t,)).fetchone()[0] / total for t in terms}
        rare = [t for t in terms if shares[t] <= COMMON_SHARE]
        if rare:
            return [(" OR ".join(rare), True)]
        if min(shares.values()) > NO_WEIGHT_SHARE:
            return [(" AND ".join(terms), False), (expression, False)]
        rarest = sorted(terms, key=shares.__getitem__)[:2]
        return [(" AND ".join(terms), True), (" AND ".join(rarest), True), (" OR ".join(rarest), True)]

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
    ``root/demonstration`` (the reference's ``vectordb/`` layout); ``folders`` puts a kind's store
    elsewhere (EXPERIENCE_SAVED_PATH, DEMONSTRATION_SAVED_PATH)."""

    def __init__(
        self,
        root: Path | None = None,
        embedder: Embedder | None = None,
        folders: Mapping[str, Path] | None = None,
    ) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.embedder = embedder
        self.folders = dict(folders or {})

    def store(self, kind: str) -> KnowledgeStore:
        """The store of ``kind`` (one of :data:`KINDS`)."""
        if kind not in KINDS:
            raise KnowledgeError(f"unknown knowledge kind {kind!r}; choose one of {', '.join(KINDS)}")
        return KnowledgeStore(self.folders.get(kind) or self.root / kind, kind, self.embedder)

    def stores(self, kind: str | None = None) -> list[KnowledgeStore]:
        """The store of ``kind``, or of every kind."""
        return [self.store(k) for k in ([kind] if kind else KINDS)]

    def find(self, doc_id: str) -> DocumentInfo | None:
        """Document ``doc_id`` in whichever store holds it, or None."""
        for store in self.stores():
            info = store.get(doc_id)
            if info is not None:
                return info
        return None
