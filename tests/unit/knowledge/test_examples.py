"""Examples (saved runs, demonstrations) round-trip through a store and render for the prompt."""

from __future__ import annotations

from pathlib import Path

from starweave.knowledge import KnowledgeStore
from starweave.knowledge.examples import Example, ExampleStep, examples_of, save_example


def example() -> Example:
    return Example(
        request="count the csv files in data",
        steps=[ExampleStep("list them", "run_shell ls data/*.csv | wc -l", "3")],
        outcome="There are 3 csv files.",
        agent="linux",
        source="experience",
    )


def test_a_saved_example_is_found_by_a_similar_request_and_comes_back_whole(tmp_path: Path) -> None:
    store = KnowledgeStore(tmp_path, "experience")
    doc_id = save_example(store, example())
    hits = store.search("how many csv files are there", k=3)
    assert [h.doc_id for h in hits] == [doc_id]
    assert examples_of(hits) == [example()]
    assert store.search("open the calculator", k=3) == []


def test_saving_the_same_example_twice_keeps_one_document(tmp_path: Path) -> None:
    store = KnowledgeStore(tmp_path, "experience")
    assert save_example(store, example()) == save_example(store, example())
    assert len(store.documents()) == 1


def test_render_numbers_the_steps_and_clips_long_text() -> None:
    long = Example(request="r", steps=[ExampleStep(result="x" * 1000)], outcome="done")
    text = long.render()
    assert text.startswith("Request: r\nStep 1: ")
    assert text.endswith("Outcome: done")
    assert len(text) < 400
    assert Example.from_metadata({"title": "a help page"}) is None
