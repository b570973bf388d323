"""``starweave learn``: fill and manage the offline knowledge store: help documents (``docs``),
demonstrations (``demo``), and the experience saved after runs; ``list``, ``show`` and ``forget``
manage every kind. Errors are one line and exit code 2."""

from __future__ import annotations

import hashlib
import json
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
from starweave.knowledge.demonstrations import load_demonstrations
from starweave.knowledge.examples import Example, save_example
from starweave.knowledge.saving import configured_store

learn_app = typer.Typer(
    help="Teach the agents: index help documents; list, show and forget what they know.",
    no_args_is_help=True,
)

StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Folder of the knowledge stores (default: $STARWEAVE_KNOWLEDGE_DIR or "
        "$XDG_DATA_HOME/starweave/vectordb).",
    ),
]


def _base(store: Path | None) -> KnowledgeBase:
    return KnowledgeBase(store)


def _store(kind: str, store: Path | None) -> KnowledgeStore:
    """The store of ``kind``: under --store, else where the configuration puts it
    (EXPERIENCE_SAVED_PATH, DEMONSTRATION_SAVED_PATH), else under the default root."""
    if store is not None or kind == "docs":
        return _base(store).store(kind)
    return configured_store(kind, load_config().system)


def _stores(kind: str | None, store: Path | None) -> list[KnowledgeStore]:
    return [_store(k, store) for k in ([kind] if kind else KINDS)]


def _find(doc_id: str, store: Path | None) -> DocumentInfo | None:
    """Document ``doc_id`` in whichever store holds it."""
    return next((info for s in _stores(None, store) if (info := s.get(doc_id)) is not None), None)


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
    """Index help documents (markdown, text, HTML) for retrieval."""
    try:
        files = collect_files(paths)
        if not files:
            fail("no help documents found (looked for .md, .markdown, .txt, .text, .rst, .html, .htm)")
        docs = [read_document(path) for path in files]
        target = _base(store).store("docs")
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
    except StarweaveError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_line(exc))
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
    try:
        loaded: list[tuple[Example, str | None]] = []
        for path in paths:  # every file is read before anything is stored: a bad one stores nothing
            examples, recorded_app = load_demonstrations(path)
            loaded += [(example, app or recorded_app) for example in examples]
        target = _store("demonstration", store)
        ids = [save_example(target, example, example_app) for example, example_app in loaded]
    except StarweaveError as exc:
        fail(str(exc))
    except UnicodeDecodeError as exc:
        fail(f"not a text file ({exc.reason}); give YAML example files or a run's response.log")
    except OSError as exc:
        fail(os_error_line(exc))
    print(f"imported {len(ids)} demonstration(s) into {target.folder}: {', '.join(ids)}")


@learn_app.command("list")
def learn_list(
    kind: Annotated[str | None, typer.Option("--kind", help=f"Only this kind: {', '.join(KINDS)}.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """List what the agents know: one line per document."""
    try:
        infos = [info for s in _stores(kind, store) for info in s.documents()]
    except StarweaveError as exc:
        fail(str(exc))
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
        print(f"nothing learned yet (store: {_base(store).root})")
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
    try:
        info = _find(doc_id, store)
    except StarweaveError as exc:
        fail(str(exc))
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
        try:
            count = _store(kind, store).forget_all()
        except StarweaveError as exc:
            fail(str(exc))
        print(f"forgot {count} {kind} document(s)")
        return
    if doc_id is None:
        fail("name a document id, or use --kind K --all (see: starweave learn list)")
    try:
        info = _find(doc_id, store)
    except StarweaveError as exc:
        fail(str(exc))
    if info is None:
        fail(f"no learned document {doc_id!r} (see: starweave learn list)")
    _store(info.kind, store).forget(doc_id)
    print(f"forgot {doc_id} ({info.source})")
