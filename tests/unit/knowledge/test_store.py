"""The offline knowledge store: BM25 ranking, the app filter, FTS5 syntax in queries, forgetting."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from pathlib import Path

import pytest

from starweave.knowledge import KnowledgeBase, KnowledgeError, KnowledgeStore, default_root, match_expression

FONT = "To change the font size in Mousepad open Edit, then Preferences, then the Font tab."
SAVE = "To save a file in Mousepad press Control+S or choose File, then Save."
CALC = "The calculator adds two numbers when you press the equals key; memory keeps a number."


@pytest.fixture
def store(tmp_path: Path) -> KnowledgeStore:
    s = KnowledgeStore(tmp_path / "docs")
    s.add("font", FONT, "font.md", app="mousepad", metadata={"title": "Fonts"})
    s.add("save", SAVE, "save.md", app="mousepad")
    s.add("calc", CALC, "calc.md", app="gnome-calculator")
    for n in range(20):  # unrelated filler, so BM25's document frequencies mean something
        s.add(f"filler{n}", f"Unrelated note {n} about weather, gardens and trains.", f"f{n}.txt")
    return s


def test_bm25_puts_the_relevant_passage_first(store: KnowledgeStore) -> None:
    hits = store.search("how do I make the font bigger?", k=3)
    assert hits[0].source == "font.md" and hits[0].text == FONT
    assert hits[0].metadata == {"title": "Fonts"} and hits[0].doc_id == "font"
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    assert store.search("calculator numbers", k=1)[0].source == "calc.md"
    # Stemming: "saving files" finds "save a file".
    assert store.search("saving files", k=1)[0].source == "save.md"


def test_app_filter_keeps_only_that_applications_passages(store: KnowledgeStore) -> None:
    assert {h.source for h in store.search("press", k=10, app="mousepad")} == {"save.md"}
    assert {h.source for h in store.search("press", k=10, app="GNOME-Calculator")} == {"calc.md"}
    assert store.search("press", k=10, app="gimp") == []


@pytest.mark.parametrize(
    "query",
    ['font AND "', "NEAR(font size", "text:font", "font*", "(font OR", '"""', "^font -size", "AND OR NOT"],
)
def test_fts_syntax_in_a_query_is_searched_as_words(store: KnowledgeStore, query: str) -> None:
    hits = store.search(query, k=2)  # never an sqlite3.OperationalError
    if "font" in query:
        assert hits[0].source == "font.md"


def test_match_expression_quotes_every_word() -> None:
    assert match_expression('Font AND "size" NEAR(x)') == '"font" OR "size" OR "near" OR "x"'
    assert match_expression("how to do it") == '"how" OR "to" OR "do" OR "it"'
    assert match_expression("?! ()") == ""
    assert len(match_expression(" ".join(f"w{i}" for i in range(500))).split(" OR ")) == 64


def test_empty_query_or_store_finds_nothing(tmp_path: Path, store: KnowledgeStore) -> None:
    assert store.search("  ?? ", k=5) == []
    empty = KnowledgeStore(tmp_path / "none")
    assert empty.search("font") == [] and empty.documents() == [] and not empty.path.exists()


def test_forget_removes_the_document_and_its_passages(store: KnowledgeStore) -> None:
    assert store.forget("font") is True
    assert all(h.source != "font.md" for h in store.search("font size", k=10))
    assert store.forget("font") is False and store.get("font") is None
    assert store.forget_all() == 22
    assert store.documents() == [] and store.search("press") == []


def test_adding_an_id_again_replaces_it(store: KnowledgeStore) -> None:
    store.add("font", "Fonts are now set under View, Zoom.", "font.md", app="mousepad")
    hits = store.search("font", k=10)
    assert [h.text for h in hits if h.doc_id == "font"] == ["Fonts are now set under View, Zoom."]
    info = store.get("font")
    assert info is not None and info.passages == 1 and info.text.startswith("Fonts are now")


def test_long_documents_are_split_and_one_passage_kept_whole_when_asked(tmp_path: Path) -> None:
    s = KnowledgeStore(tmp_path / "experience", "experience")
    long_text = "\n\n".join(f"paragraph {n} " + "word " * 120 for n in range(10))
    assert s.add("long", long_text, "long.md") > 3
    assert s.add("run", long_text, "run", split=False) == 1
    assert {d.id: d.passages for d in s.documents()}["run"] == 1


def test_search_async_runs_off_the_loop(store: KnowledgeStore) -> None:
    hits = asyncio.run(store.search_async("font size", 1))
    assert hits[0].source == "font.md"


def test_knowledge_base_layout_and_kinds(tmp_path: Path) -> None:
    base = KnowledgeBase(tmp_path)
    base.store("experience").add("run-1", "Renamed the photos by date.", "run-1", split=False)
    assert (tmp_path / "experience" / "knowledge.sqlite3").is_file()
    found = base.find("run-1")
    assert found is not None and found.kind == "experience"
    assert base.find("nope") is None
    with pytest.raises(KnowledgeError, match="unknown knowledge kind 'bogus'"):
        base.store("bogus")


def test_default_root_is_user_data_that_survives_reinstalls() -> None:
    assert default_root({"HOME": "/h"}) == Path("/h/.local/share/starweave/vectordb")
    assert default_root({"HOME": "/h", "XDG_DATA_HOME": "/d"}) == Path("/d/starweave/vectordb")
    assert default_root({"STARWEAVE_KNOWLEDGE_DIR": "/k", "XDG_DATA_HOME": "/d"}) == Path("/k")
    # One data folder: STARWEAVE_DATA_DIR (also QA_PAIR_FILE's folder) holds the stores too.
    assert default_root({"STARWEAVE_DATA_DIR": "/s", "XDG_DATA_HOME": "/d"}) == Path("/s/vectordb")
    assert default_root({"STARWEAVE_DATA_DIR": "/s", "STARWEAVE_KNOWLEDGE_DIR": "/k"}) == Path("/k")


def test_missing_fts5_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real_connect = sqlite3.connect

    class NoFts5:
        def __init__(self, db: sqlite3.Connection) -> None:
            self._db = db

        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
            if "fts5" in sql.lower():
                raise sqlite3.OperationalError("no such module: fts5")
            return self._db.execute(sql, *args)

        def executescript(self, sql: str) -> sqlite3.Cursor:
            if "fts5" in sql.lower():
                raise sqlite3.OperationalError("no such module: fts5")
            return self._db.executescript(sql)

        def __getattr__(self, name: str) -> object:
            return getattr(self._db, name)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: NoFts5(real_connect(*a, **k)))
    with pytest.raises(KnowledgeError, match="has no FTS5"):
        KnowledgeStore(tmp_path).add("a", "text", "a.md")


def test_common_words_do_not_hide_the_relevant_passage_in_a_large_store(tmp_path: Path) -> None:
    s = KnowledgeStore(tmp_path / "docs")
    filler = [
        (f"n{n}", f"Open the menu and click item{n} in the window.", f"{n}.md", None, {}) for n in range(250)
    ]
    s.add_many(
        [*filler, ("font", "Open the menu and click Font to change the font size.", "font.md", None, {})]
    )
    # "menu", "click", "open" are in every passage: the search runs on "font" and "size".
    assert s.search("click the menu to change the font size", k=1)[0].source == "font.md"
    # Only common words: still k passages (every one holds them all), not an empty answer.
    hits = s.search("open menu click", k=5)
    assert len(hits) == 5 and all("menu" in h.text for h in hits)
    assert s.search("menu window item7", k=1)[0].source == "7.md"
