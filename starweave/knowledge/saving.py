"""Saving a finished run as experience (``--save-experience``, RAG_EXPERIENCE + SAVE_EXPERIENCE).

After a run ends with FINISH (and after its evaluation, if one ran), :func:`offer_experience` decides:

- ``--save-experience`` saves without asking;
- otherwise nothing happens unless RAG_EXPERIENCE is true, and then SAVE_EXPERIENCE says:
  ``always`` saves, ``ask`` asks on the terminal (off a terminal or with ``--no-ask``: not saved, said in one
  line; Ctrl+D is a no, Ctrl+C stops the wait like anything else),
  ``auto`` saves when the evaluation's verdict is ``complete: yes``, ``always_not`` never saves.

A run that did not FINISH is never saved. The run is summarized from its logs
(:mod:`starweave.knowledge.experience`) into the experience store, and the document id is printed
so ``starweave learn show <id>`` finds it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape

from starweave.config.models import SystemConfig
from starweave.errors import StarweaveError
from starweave.knowledge.configured import open_store
from starweave.knowledge.examples import save_example
from starweave.knowledge.experience import summarize_records
from starweave.knowledge.store import KnowledgeStore

QUESTION = "Save this run as experience? [y/N] "


class AskingView(Protocol):
    """What the question needs of the run's view (:class:`starweave.session.console.ConsoleView`):
    whether asking is allowed (a terminal, no ``--no-ask``), why not, and one typed line."""

    console: Console

    def can_ask(self) -> bool: ...

    def cannot_ask_reason(self) -> str: ...

    async def prompt_line(self, prompt: str) -> str | None: ...


async def ask_yes_no(view: AskingView, question: str) -> bool:
    """Ask ``question``; only "y"/"yes" is a yes (end of input, Ctrl+D, is a no)."""
    answer = await view.prompt_line(question)
    return (answer or "").strip().lower() in ("y", "yes")


def _verdict(evaluation: Mapping[str, Any] | None) -> str:
    return str((evaluation or {}).get("complete") or "").strip().lower()


async def should_save(
    system: SystemConfig,
    result: Mapping[str, Any],
    view: AskingView,
    forced: bool = False,
    evaluation: Mapping[str, Any] | None = None,
) -> bool:
    """Whether to save the run whose outcome is ``result``; says why not when the user would wonder."""
    console = view.console
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
        if not view.can_ask():
            console.print(
                f"Experience not saved: {escape(view.cannot_ask_reason())} "
                "(use --save-experience, or SAVE_EXPERIENCE: always).",
                soft_wrap=True,
            )
            return False
        return await ask_yes_no(view, QUESTION)
    return False


def save_run(store: KnowledgeStore, records: list[dict[str, Any]], result: Mapping[str, Any]) -> str:
    """Summarize the run and save it into ``store``; returns the document id."""
    summary = summarize_records(records, result, source="experience")
    return save_example(store, summary.example, summary.app)


async def offer_experience(
    system: SystemConfig,
    records: list[dict[str, Any]],
    result: Mapping[str, Any],
    view: AskingView,
    forced: bool = False,
    evaluation: Mapping[str, Any] | None = None,
) -> str | None:
    """Save the finished run as experience when the options and settings say so; returns the
    document id (printed with where it went) or None."""
    if not await should_save(system, result, view, forced, evaluation):
        return None
    console = view.console
    store = open_store(system, "experience")
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
