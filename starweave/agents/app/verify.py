"""Checking an AppAgent's FINISH against the application: a claimed result must be there to be seen.

A small model answers FINISH with the result it expects ("12 + 30 = 42") while its own observation
says the calculator shows 0. So the result is compared with what the window shows after the step's
actions (the text of its controls and its title) and with what the subtask's actions produced
(their arguments and results: a document written through the editor's API is not on screen).
Two kinds of claims are checked, both found in the result text:

- numbers: the ones the subtask does not give ("12 + 30 = 42" for "compute 12 + 30" claims 42;
  the operands are the subtask's, not a result), or all of them when the subtask gives every one
  ("7" for "type 7" claims 7); a claimed number may be a rounding of a shown one (3.14 for 3.14159);
- quoted text ('hello desktop'), compared without case and spacing.

A result with neither claims nothing checkable and passes. The echo tools (``summary`` repeats the
model's own words, ``wait``) are no evidence. Two more checks need no claim: a text the subtask
quotes and a file name it gives must be somewhere (typed, written, saved to or shown), and an
editor's file API must have no unsaved document left.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from starweave.agents.app.controls import CLICKABLE, TEXT_HOLDERS, Control, canonical_name

#: Contradicted FINISH answers refused per subtask; the next one ends the subtask as FAIL.
MAX_FINISH_REFUSALS = 2
#: Tools whose output is not the application's state (``summary`` echoes the model's text).
ECHO_TOOLS = frozenset({"summary", "wait"})
#: Tools that only read: a subtask that ran nothing else changed nothing.
READ_ONLY_TOOLS = frozenset({"texts", "summary", "wait", "read_document", "list_open_files"})
SHOWN_CONTROLS = 6
SHOWN_CHARS = 60
#: Arguments that carry typed or written text (a file name in them is no file).
_TYPED = frozenset({"text", "content", "keys", "new_text", "old_text", "id", "name"})

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")
_FILE = re.compile(r"(?<![\w.-])[\w-]+\.[A-Za-z][A-Za-z0-9]{1,4}(?![\w-])")
_QUOTED = re.compile(r"(?<!\w)'([^'\n]{2,120})'(?!\w)|\"([^\"\n]{2,120})\"|“([^”\n]{2,120})”")


@dataclass(frozen=True)
class Claim:
    """What a result text asserts that can be checked: numbers and quoted texts."""

    numbers: tuple[Decimal, ...] = ()
    texts: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.numbers or self.texts)


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace("−", "-").replace(",", ""))
    except InvalidOperation:
        return None


def numbers_in(text: str) -> list[Decimal]:
    """The standalone numbers of ``text`` (not digits inside words or file names)."""
    found = (_decimal(m.group(0)) for m in _NUMBER.finditer(text))
    return [n for n in found if n is not None]


def claim_of(result: str, given: str = "") -> Claim:
    """The checkable part of a FINISH result: its quoted texts, and the numbers it states beyond
    those ``given`` (the subtask) states, or all of them when ``given`` states every one."""
    stated = numbers_in(result)
    known = set(numbers_in(given))
    numbers = [n for n in stated if n not in known] or stated
    texts = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(result)]
    return Claim(tuple(numbers), tuple(t for t in texts if t.strip()))


def _shows_number(claimed: Decimal, shown: Iterable[Decimal]) -> bool:
    places = max(0, -int(claimed.as_tuple().exponent)) if claimed.is_finite() else 0
    tolerance = Decimal(5) / (Decimal(10) ** (places + 1))
    return any(abs(value - claimed) <= tolerance for value in shown)


@dataclass
class Evidence:
    """What the window shows and what the subtask's actions produced, as text."""

    window: list[str]
    actions: list[str]

    def text(self) -> str:
        """Everything, for matching quoted text."""
        return canonical_name(" \n ".join([*self.window, *self.actions]))

    def numbers(self) -> list[Decimal]:
        """Every number in the evidence."""
        return [n for part in (*self.window, *self.actions) for n in numbers_in(part)]


def window_texts(controls: list[Control], title: str = "", every_name: bool = False) -> list[str]:
    """What the window shows: its title, the text controls hold, and the names of non-clickable controls.

    Button names are left out (a calculator's "7" key does not show that the result is 7), unless
    ``every_name`` (to see whether a control the subtask names was there at all).
    """
    texts = [title] if title else []
    for control in controls:
        if control.value:
            texts.append(control.value)
        if control.name and (every_name or control.control_type not in CLICKABLE):
            texts.append(control.name)
    return texts


def _succeeded(actions: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], Any]]:
    """The successful actions that are not echoes, each with its tool's own result payload."""
    for action in actions:
        result = action.get("result") or {}
        payload = result.get("result")
        if str(result.get("status")) != "success" or action.get("function") in ECHO_TOOLS:
            continue
        if isinstance(payload, dict) and payload.get("success") is False:
            continue
        yield action, payload


def action_texts(actions: Iterable[dict[str, Any]], every_argument: bool = False) -> list[str]:
    """The arguments and results of the successful actions (``ActionCommandInfo`` dicts), echoes left
    out, and the controls' ids and names unless ``every_argument`` (they say which control was used,
    not what the application holds)."""
    texts: list[str] = []
    for action, payload in _succeeded(actions):
        arguments = action.get("arguments") or {}
        texts.extend(
            str(v)
            for k, v in arguments.items()
            if (every_argument or k not in ("id", "name")) and isinstance(v, (str, int, float))
        )
        if payload not in (None, "", {}, []):
            texts.append(payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False))
    return texts


def acted(actions: Iterable[dict[str, Any]]) -> bool:
    """True when an action that may change the application succeeded."""
    return any(
        str((a.get("result") or {}).get("status")) == "success" and a.get("function") not in READ_ONLY_TOOLS
        for a in actions
    )


def contradiction(result: str, evidence: Evidence, given: str = "") -> str:
    """What of ``result`` neither the window nor the subtask's actions show ("" when nothing);
    ``given`` is the subtask (the numbers it gives are no claim, see :func:`claim_of`)."""
    claim = claim_of(result, given)
    if not claim:
        return ""
    shown = evidence.numbers()
    missing = [_plain(n) for n in claim.numbers if not _shows_number(n, shown)]
    text = evidence.text()
    missing += [f'"{t}"' for t in claim.texts if canonical_name(t) not in text]
    return ", ".join(missing)


def _plain(number: Decimal) -> str:
    return format(number.normalize(), "f") if number == number.to_integral_value() else str(number)


def window_summary(controls: list[Control]) -> str:
    """The texts the window shows, briefly: the text fields first (a calculator's display, an editor's
    document), then the labels that are not just a button's name repeated."""
    holders = [c for c in controls if c.control_type in TEXT_HOLDERS]
    buttons = {canonical_name(c.name) for c in controls if c.control_type in CLICKABLE}
    labels = [
        c
        for c in controls
        if c.control_type not in CLICKABLE
        and c.control_type not in TEXT_HOLDERS
        and (c.value or c.name)
        and canonical_name(c.value or c.name) not in buttons
    ]
    shown = [
        f'{c.control_type} (id {c.id}) "{" ".join((c.value or c.name).split())[:SHOWN_CHARS]}"'
        for c in [*holders, *labels][:SHOWN_CONTROLS]
    ]
    return "; ".join(shown) or "no text"


def file_names(text: str) -> list[str]:
    """The file names in ``text`` (``notes.txt``, ``data.csv``; not ``e.g.`` or ``3.14``)."""
    return list(dict.fromkeys(_FILE.findall(text)))


def missing_texts(subtask: str, evidence: Evidence, files: Evidence | None = None) -> str:
    """The texts the subtask quotes ('hello desktop') and the file names it gives (hello.txt) that
    are nowhere: a subtask that names a text to enter or a file to write is not done until the text
    is in ``evidence`` and the file name in ``files`` (see :func:`file_evidence`; a file name typed
    into a document is no saved file). "" when nothing is missing."""
    text = evidence.text()
    wanted = [f'"{t}"' for t in claim_of(subtask).texts if canonical_name(t) not in text]
    quoted = " ".join(claim_of(subtask).texts)
    where = (files or evidence).text()
    wanted += [n for n in file_names(subtask) if n not in quoted and canonical_name(n) not in where]
    return ", ".join(wanted)


def file_evidence(title: str, actions: Iterable[dict[str, Any]]) -> Evidence:
    """Where a saved file shows: the window's title (an editor names its file there) and what the
    successful actions say of files: their arguments other than the text they typed or wrote, and
    the results of API tools (a GUI tool's result repeats the typed text)."""
    texts: list[str] = []
    for action, payload in _succeeded(actions):
        arguments = action.get("arguments") or {}
        texts.extend(str(v) for k, v in arguments.items() if k not in _TYPED and isinstance(v, str))
        if isinstance(payload, dict):
            texts.append(json.dumps(payload, ensure_ascii=False))
    return Evidence([title] if title else [], texts)


def unsaved_files(listing: Any) -> list[str]:
    """The documents an editor's file API lists as not saved (``list_open_files``): changed since the
    last save, or new and never saved."""
    files = listing.get("files") if isinstance(listing, dict) else None
    return [
        str(f.get("path"))
        for f in files or []
        if isinstance(f, dict) and (f.get("modified") or f.get("saved") is False)
    ]


def refusal_note(reason: str, controls: list[Control], final: bool) -> str:
    """The note shown to the model (and the FAIL result when ``final``) for a refused FINISH."""
    seen = window_summary(controls)
    if final:
        return f"FINISH refused again: {reason}. The window shows: {seen}. The subtask ends as FAIL."
    return (
        f"FINISH refused: {reason}. The window shows: {seen}. If the subtask is done, FINISH with what "
        "the window shows; else act."
    )


def claim_reason(result: str, missing: str) -> str:
    """Why a claimed result is refused."""
    return f"the result {result!r} claims {missing}, which the window does not show"
