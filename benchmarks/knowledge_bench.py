"""Knowledge store benchmark: index size on disk and top-5 retrieval latency at 10,000 documents.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/knowledge_bench.py [--docs N] [--queries N]``).

The documents are synthetic help pages of 80 to 400 words (so some are split into two passages):
common English words (40%), a long tail of 4,000 content words (30%, both Zipf-skewed, as real text
is), and UI terms, actions and application names (30%, uniform). Queries are requests of 4 to 12
words built the same way, plus some with FTS5 syntax characters; each is a full
:meth:`KnowledgeStore.search` call (a fresh connection, the MATCH, BM25 ordering, the join to the
documents), as an agent step would make it.
Target: top-5 retrieval under 20 ms (median and p95) at 10,000 documents.

``--embeddings DIM`` measures the semantic retriever instead (lexical and vector rankings fused, as
with ``RAG_EMBEDDING_MODEL``): passages get DIM-number vectors from a hashing embedder in this
process, so the figures are the store's cost; a real model adds its own time per query.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from starweave.knowledge import KnowledgeStore

APPS = [
    "mousepad", "gnome-calculator", "firefox", "thunderbird", "gimp", "libreoffice", "terminal",
    "nautilus",
]  # fmt: skip
UI = [
    "menu", "toolbar", "button", "dialog", "window", "tab", "panel", "sidebar", "preferences",
    "settings", "shortcut", "keyboard", "mouse", "font", "size", "color", "theme", "zoom", "file",
    "folder", "document", "page", "table", "chart", "cell", "row", "column", "image", "layer",
    "brush", "filter", "export", "import", "print", "save", "open", "close", "undo", "redo",
    "search", "replace", "spelling", "language", "account", "password", "message", "attachment",
    "calendar", "bookmark", "history", "download", "extension", "plugin",
]  # fmt: skip
ACTIONS = [
    "click", "press", "choose", "select", "open", "close", "drag", "drop", "type", "enter", "copy",
    "paste", "cut", "delete", "rename", "move", "create", "insert", "format", "align", "resize",
    "rotate", "crop", "sort", "filter", "group", "share", "sync", "restore", "reset", "enable",
]  # fmt: skip
COMMON = [
    "the", "a", "to", "of", "and", "in", "for", "on", "with", "is", "you", "your", "can", "this",
    "that", "by", "from", "or", "when", "then", "it", "as", "be", "are", "if", "each", "new",
    "all", "more", "at", "first", "next", "after", "before", "into", "any", "only", "also",
    "which", "other", "use", "using",
]  # fmt: skip
TARGET_MS = 20.0
# Real help text has thousands of distinct words: pseudo-words from syllables, used with a Zipf skew.
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vi", "do", "pe", "an", "or", "ul", "ex", "ip"]
LEXICON = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES[:12]][:4000]


def _words(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.40:  # common words, Zipf-skewed
            out.append(COMMON[min(int(rng.paretovariate(1.2)) - 1, len(COMMON) - 1)])
        elif r < 0.70:  # the long tail of content words, Zipf-skewed
            out.append(LEXICON[min(int(rng.paretovariate(0.8)) - 1, len(LEXICON) - 1)])
        else:
            out.append(rng.choice(UI if r < 0.85 else ACTIONS if r < 0.97 else APPS))
    return out


def _document(rng: random.Random, n: int) -> str:
    words = _words(rng, rng.randint(80, 400))
    # A unique token per document, as real pages have names and numbers nobody else uses.
    words.insert(rng.randrange(len(words)), f"item{n}")
    paragraphs = [" ".join(words[i : i + 60]) for i in range(0, len(words), 60)]
    return "\n\n".join(paragraphs)


class HashingEmbedder:
    """Deterministic word-hashing vectors: the store's semantic path without a model's cost."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * self.dim
            for word in text.split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                vector[int.from_bytes(digest, "little") % self.dim] += 1.0
            vectors.append(vector)
        return vectors


def build(store: KnowledgeStore, docs: int, rng: random.Random) -> tuple[float, int]:
    """Index ``docs`` synthetic documents in batches of 1,000; returns (seconds, passages)."""
    start = time.perf_counter()
    passages = 0
    batch = 1000
    for first in range(0, docs, batch):
        passages += store.add_many(
            [
                (f"doc-{n}", _document(rng, n), f"help/{n}.md", rng.choice(APPS), {"title": f"Page {n}"})
                for n in range(first, min(first + batch, docs))
            ]
        )
    return time.perf_counter() - start, passages


def measure(store: KnowledgeStore, queries: int, rng: random.Random, app: bool) -> list[float]:
    """Milliseconds of each of ``queries`` top-5 searches (with a random --app filter if ``app``)."""
    times = []
    for i in range(queries):
        text = " ".join(_words(rng, rng.randint(4, 12)))
        if i % 10 == 0:
            text += ' "AND (NEAR* col:'
        chosen = rng.choice(APPS) if app else None
        start = time.perf_counter()
        store.search(text, k=5, app=chosen)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--embeddings", type=int, default=0, metavar="DIM", help="semantic retrieval, DIM-d vectors"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    embedder = HashingEmbedder(args.embeddings) if args.embeddings else None
    with tempfile.TemporaryDirectory(prefix="knowledge-bench-") as tmp:
        store = KnowledgeStore(Path(tmp) / "docs", embedder=embedder)
        if embedder is not None:
            print(f"semantic retrieval: {embedder.dim}-number vectors, fused with BM25")
        seconds, passages = build(store, args.docs, rng)
        size = store.path.stat().st_size
        print(f"index: {args.docs} documents, {passages} passages, built in {seconds:.1f} s")
        print(f"index size on disk: {size / 1e6:.1f} MB ({size / args.docs / 1024:.1f} KiB per document)")
        measure(store, 20, rng, app=False)  # warm the page cache, as a running agent's would be
        ok = True
        for label, app in (("top-5", False), ("top-5 with --app filter", True)):
            times = sorted(measure(store, args.queries, rng, app))
            median = statistics.median(times)
            p95 = times[int(len(times) * 0.95) - 1]
            ok = ok and median < TARGET_MS and p95 < TARGET_MS
            print(
                f"{label}: median {median:.2f} ms, p95 {p95:.2f} ms, max {times[-1]:.2f} ms "
                f"over {len(times)} queries (target < {TARGET_MS:.0f} ms)"
            )
    print("within target" if ok else "OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
