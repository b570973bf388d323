"""Saving a finished run as experience (``--save-experience``, RAG_EXPERIENCE + SAVE_EXPERIENCE).

After a run ends with FINISH (and after its evaluation, if one ran), :func:`offer_experience` decides:

- ``--save-experience`` saves without asking;
- otherwise nothing happens unless RAG_EXPERIENCE is true, and then SAVE_EXPERIENCE says:
  ``always`` saves, ``ask`` asks on the terminal (off a terminal: not saved, said in one line),
  ``auto`` saves when the evaluation's verdict is ``complete: yes``, ``always_not`` never saves.

A run that did not FINISH is never saved. The run is summarized from its logs
(:mod:`starweave.knowledge.experience`) into the experience store, and the document id is printed
so ``starweave learn show <id>`` finds it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from starweave.config.models import SystemConfig
from starweave.errors import StarweaveError
from starweave.knowledge.examples import save_example
from starweave.knowledge.experience import summarize_records
from starweave.knowledge.store import KnowledgeBase, KnowledgeStore

QUESTION = "Save this run as experience? [y/N] "
#: Asks the user ``question``: True/False, or None when there is nobody to ask (no terminal).
Asker = Callable[[Console, str], Awaitable[bool | None]]


def configured_store(
    kind: str, system: SystemConfig | None = None, root: Path | None = None
) -> KnowledgeStore:
    """The store of ``kind``: under ``root`` when given (``learn --store``), else at its configured
    saved path (EXPERIENCE_SAVED_PATH, DEMONSTRATION_SAVED_PATH), else under the default root."""
    saved = {}
    if system is not None and root is None:
        saved = {"experience": system.experience_saved_path, "demonstration": system.demonstration_saved_path}
    path = saved.get(kind, "")
    if path:
        return KnowledgeStore(Path(path).expanduser(), kind)
    return KnowledgeBase(root).store(kind)


async def ask_on_terminal(console: Console, question: str) -> bool | None:
    """Ask on the terminal (None when stdin is not one); reading it blocks, so off the event loop."""
    if not sys.stdin.isatty():
        return None
    # markup=False: "[y/N]" is text, not a style tag.
    answer = await asyncio.to_thread(lambda: console.input(question, markup=False))
    return answer.strip().lower() in ("y", "yes")


def _verdict(evaluation: Mapping[str, Any] | None) -> str:
    return str((evaluation or {}).get("complete") or "").strip().lower()


async def should_save(
    system: SystemConfig,
    result: Mapping[str, Any],
    console: Console,
    forced: bool = False,
    evaluation: Mapping[str, Any] | None = None,
    ask: Asker = ask_on_terminal,
) -> bool:
    """Whether to save the run whose outcome is ``result``; says why not when the user would wonder."""
    status = str(result.get("status") or "")
    if status != "FINISH":
        if forced:
            console.print(
                f"Experience not saved: the run did not finish (status {status or 'unknown'}).",
                soft_wrap=True,
            )
        return False
    if forced:
        return True
    if not system.rag_experience:
        return False
    policy = system.save_experience
    if policy == "always":
        return True
    if policy == "auto":
        verdict = _verdict(evaluation)
        if verdict != "yes":
            why = f"the evaluation says complete: {verdict}" if verdict else "no evaluation ran (--evaluate)"
            console.print(f"Experience not saved (SAVE_EXPERIENCE auto): {why}.", soft_wrap=True)
        return verdict == "yes"
    if policy == "ask":
        answer = await ask(console, QUESTION)
        if answer is None:
            console.print(
                "Experience not saved: no terminal to ask on "
                "(use --save-experience, or SAVE_EXPERIENCE: always).",
                soft_wrap=True,
            )
        return bool(answer)
    return False


def save_run(store: KnowledgeStore, records: list[dict[str, Any]], result: Mapping[str, Any]) -> str:
    """Summarize the run and save it into ``store``; returns the document id."""
    summary = summarize_records(records, result, source="experience")
    return save_example(store, summary.example, summary.app)


async def offer_experience(
    system: SystemConfig,
    records: list[dict[str, Any]],
    result: Mapping[str, Any],
    console: Console,
    forced: bool = False,
    evaluation: Mapping[str, Any] | None = None,
    ask: Asker = ask_on_terminal,
) -> str | None:
    """Save the finished run as experience when the options and settings say so; returns the
    document id (printed with where it went) or None."""
    if not await should_save(system, result, console, forced, evaluation, ask):
        return None
    store = configured_store("experience", system)
    try:
        doc_id = await asyncio.to_thread(save_run, store, records, result)
    except (StarweaveError, OSError, sqlite3.Error) as exc:
        # The run itself went well: a store that cannot take it is a warning, not a failed run.
        console.print(
            f"[yellow]Experience not saved: {escape(' '.join(str(exc).split()))}[/yellow]", soft_wrap=True
        )
        return None
    shown = escape(doc_id)
    console.print(
        f"Experience saved: {shown} in {escape(str(store.folder))} (starweave learn show {shown})",
        soft_wrap=True,
    )
    return doc_id
