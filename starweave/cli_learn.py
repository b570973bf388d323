"""``starweave learn``: fill and manage the offline knowledge store: help documents (``docs``),
demonstrations (``demo``), and the experience saved after runs; ``list``, ``show`` and ``forget``
manage every kind. Errors are one line and exit code 2."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from starweave.cli_support import fail, os_error_line
from starweave.config import load_config
from starweave.errors import StarweaveError
from starweave.knowledge import (
    KINDS,
    DocumentInfo,
    KnowledgeBase,
    KnowledgeStore,
    collect_files,
    read_document,
)
from starweave.knowledge.configured import knowledge_base
from starweave.knowledge.demonstrations import load_demonstrations
from starweave.knowledge.documents import SUPPORTED_SUFFIXES
from starweave.knowledge.examples import Example, save_example

learn_app = typer.Typer(
    help="Teach the agents: index help documents; list, show and forget what they know.",
    no_args_is_help=True,
)

StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Folder of the knowledge stores (default: $STARWEAVE_KNOWLEDGE_DIR, else vectordb in "
        "$STARWEAVE_DATA_DIR or $XDG_DATA_HOME/starweave).",
    ),
]


def _base(store: Path | None) -> KnowledgeBase:
    """The stores: under --store, else where the configuration puts them (EXPERIENCE_SAVED_PATH,
    DEMONSTRATION_SAVED_PATH), else under the default root; with the configured embedder
    (RAG_EMBEDDING_MODEL), so learned documents get their vectors."""
    return knowledge_base(load_config().system, store)


def _store(kind: str, store: Path | None) -> KnowledgeStore:
    return _base(store).store(kind)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """What a learn command can run into, as one ``error:`` line and exit code 2: bad input, an
    unreadable file, a store SQLite cannot use (locked, corrupt, disk full)."""
    try:
        yield
    except StarweaveError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_line(exc))
    except sqlite3.Error as exc:
        fail(f"the knowledge store cannot be used: {exc}")


def _summary(info: DocumentInfo) -> str:
    """What ``learn list`` says of a document: its title, or an example's request."""
    example = Example.from_metadata(info.metadata)
    if example is not None:
        return example.request
    return str(info.metadata.get("title", ""))


def document_id(kind: str, path: Path, app: str | None) -> str:
    """A short id stable for one file and app, so learning a file again replaces it."""
    digest = hashlib.sha256(f"{app or ''}\0{path.resolve()}".encode()).hexdigest()[:10]
    return f"{kind}-{digest}"


@learn_app.command("docs")
def learn_docs(
    paths: Annotated[list[Path], typer.Argument(help="Help documents, or folders of them.")],
    app: Annotated[
        str | None, typer.Option("--app", help="The application they document (e.g. mousepad).")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Index help documents (markdown, text, HTML, PDF) for retrieval."""
    with one_line_errors():
        files = collect_files(paths)
        if not files:
            fail(f"no help documents found (looked for {', '.join(sorted(SUPPORTED_SUFFIXES))})")
        docs = [read_document(path) for path in files]
        target = _store("docs", store)
        total = target.add_many(
            [
                (
                    document_id("docs", d.path, app),
                    d.text,
                    str(d.path.resolve()),
                    app,
                    {"title": d.title, "file": d.path.name},
                )
                for d in docs
            ]
        )
    print(f"learned {len(docs)} document(s), {total} passage(s), into {target.folder}")


@learn_app.command("demo")
def learn_demo(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Reference-format YAML example files, or recorded runs (response.log or log folder)."
        ),
    ],
    app: Annotated[
        str | None, typer.Option("--app", help="The application they show (default: a recorded run's).")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Import demonstrations: the reference's YAML examples (example1:, example2:, ...) and recorded
    Starweave runs, retrieved later for similar requests."""
    with one_line_errors():
        loaded: list[tuple[Example, str | None]] = []
        for path in paths:  # every file is read before anything is stored: a bad one stores nothing
            try:
                examples, recorded_app = load_demonstrations(path)
            except UnicodeDecodeError as exc:
                fail(f"not a text file ({exc.reason}); give YAML example files or a run's response.log")
            loaded += [(example, app or recorded_app) for example in examples]
        target = _store("demonstration", store)
        ids = [save_example(target, example, example_app) for example, example_app in loaded]
    print(f"imported {len(ids)} demonstration(s) into {target.folder}: {', '.join(ids)}")


@learn_app.command("list")
def learn_list(
    kind: Annotated[str | None, typer.Option("--kind", help=f"Only this kind: {', '.join(KINDS)}.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """List what the agents know: one line per document."""
    with one_line_errors():
        infos = [info for s in _base(store).stores(kind) for info in s.documents()]
    if json_output:
        rows = [
            {
                "id": i.id,
                "kind": i.kind,
                "source": i.source,
                "app": i.app,
                "passages": i.passages,
                "request": r.request if (r := Example.from_metadata(i.metadata)) else None,
            }
            for i in infos
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not infos:
        print(f"nothing learned yet (store: {KnowledgeBase(store).root})")
    for i in infos:
        added = datetime.fromtimestamp(i.added).strftime("%Y-%m-%d %H:%M")
        print(
            f"{i.id}  {i.kind}  {i.app or '-'}  {i.passages} passage(s)  {added}  {_summary(i)}  {i.source}"
        )


@learn_app.command("show")
def learn_show(
    doc_id: Annotated[str, typer.Argument(help="The document's id (see `starweave learn list`).")],
    store: StoreOption = None,
) -> None:
    """Show one stored document: where it came from and its text."""
    with one_line_errors():
        info = _base(store).find(doc_id)
    if info is None:
        fail(f"no learned document {doc_id!r} (see: starweave learn list)")
    print(f"id: {info.id}\nkind: {info.kind}\nsource: {info.source}\napp: {info.app or '-'}")
    example = Example.from_metadata(info.metadata)
    if example is not None:
        # A saved run or a demonstration: shown as the prompt's examples slot shows it.
        print(f"agent: {example.agent or '-'}\n\n{example.render()}")
        return
    print(f"passages: {info.passages}\nmetadata: {json.dumps(info.metadata, ensure_ascii=False)}\n")
    print(info.text)


@learn_app.command("forget")
def learn_forget(
    doc_id: Annotated[str | None, typer.Argument(help="The document's id.")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="With --all: the kind to empty.")] = None,
    forget_all: Annotated[bool, typer.Option("--all", help="Forget every document of --kind.")] = False,
    store: StoreOption = None,
) -> None:
    """Forget one document, or (--kind K --all) every document of a kind."""
    if forget_all:
        if doc_id is not None or kind is None:
            fail("--all needs --kind and no id (e.g. starweave learn forget --kind docs --all)")
        with one_line_errors():
            count = _store(kind, store).forget_all()
        print(f"forgot {count} {kind} document(s)")
        return
    if doc_id is None:
        fail("name a document id, or use --kind K --all (see: starweave learn list)")
    with one_line_errors():
        info = _base(store).find(doc_id)
        if info is None:
            fail(f"no learned document {doc_id!r} (see: starweave learn list)")
        _store(info.kind, store).forget(doc_id)
    print(f"forgot {doc_id} ({info.source})")
