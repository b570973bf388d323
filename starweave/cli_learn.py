"""``starweave learn``: fill and manage the offline knowledge store (help documents now; experience
and demonstrations share the same list, show and forget). Errors are one line and exit code 2."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from starweave.cli_support import fail, os_error_line
from starweave.errors import StarweaveError
from starweave.knowledge import KINDS, KnowledgeBase, collect_files, read_document

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


@learn_app.command("list")
def learn_list(
    kind: Annotated[str | None, typer.Option("--kind", help=f"Only this kind: {', '.join(KINDS)}.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """List what the agents know: one line per document."""
    try:
        base = _base(store)
        stores = [base.store(kind)] if kind else base.stores()
        infos = [info for s in stores for info in s.documents()]
    except StarweaveError as exc:
        fail(str(exc))
    if json_output:
        rows = [
            {"id": i.id, "kind": i.kind, "source": i.source, "app": i.app, "passages": i.passages}
            for i in infos
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not infos:
        print(f"nothing learned yet (store: {base.root})")
    for i in infos:
        added = datetime.fromtimestamp(i.added).strftime("%Y-%m-%d %H:%M")
        title = i.metadata.get("title", "")
        print(f"{i.id}  {i.kind}  {i.app or '-'}  {i.passages} passage(s)  {added}  {title}  {i.source}")


@learn_app.command("show")
def learn_show(
    doc_id: Annotated[str, typer.Argument(help="The document's id (see `starweave learn list`).")],
    store: StoreOption = None,
) -> None:
    """Show one stored document: where it came from and its text."""
    info = _base(store).find(doc_id)
    if info is None:
        fail(f"no learned document {doc_id!r} (see: starweave learn list)")
    print(f"id: {info.id}\nkind: {info.kind}\nsource: {info.source}\napp: {info.app or '-'}")
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
    base = _base(store)
    if forget_all:
        if doc_id is not None or kind is None:
            fail("--all needs --kind and no id (e.g. starweave learn forget --kind docs --all)")
        try:
            count = base.store(kind).forget_all()
        except StarweaveError as exc:
            fail(str(exc))
        print(f"forgot {count} {kind} document(s)")
        return
    if doc_id is None:
        fail("name a document id, or use --kind K --all (see: starweave learn list)")
    info = base.find(doc_id)
    if info is None:
        fail(f"no learned document {doc_id!r} (see: starweave learn list)")
    base.store(info.kind).forget(doc_id)
    print(f"forgot {doc_id} ({info.source})")
