"""What an action did to the window: its texts before and after, compared.

The model sees the controls of the window as they are now, but not what its last action changed:
a small model that typed into a display and sees "0" cannot tell whether its input went nowhere or
was never typed. So the next observation says what changed (or that nothing did), and the
``repeat`` guard (guards.py) reads the same comparison: an action after which the window's texts
were the same as before had no visible effect.
"""

from __future__ import annotations

from collections.abc import Iterable

from starweave.agents.app.controls import Control

#: A window's texts: each control's label, type, name and the text it holds.
Fingerprint = tuple[tuple[str, str, str, str], ...]
#: Changed controls named in an observation at most.
SHOWN_CHANGES = 4
SHOWN_CHARS = 40
NO_EFFECT = "Your last action changed nothing the window shows."


def fingerprint(controls: Iterable[Control]) -> Fingerprint:
    """The window's texts, comparable across two reads of the same window."""
    return tuple((c.id, c.control_type, c.name, c.value) for c in controls)


def _text(name: str, value: str) -> str:
    shown = " ".join((value or name).split())
    return f'"{shown[:SHOWN_CHARS]}"' + ("..." if len(shown) > SHOWN_CHARS else "")


def effect_note(before: Fingerprint | None, after: Iterable[Control]) -> str:
    """What the window's texts show changed since ``before`` (the window when the last action
    ran), for the next observation; "" when no action ran since."""
    if before is None:
        return ""
    now = fingerprint(after)
    if now == before:
        return NO_EFFECT
    old = {entry[0]: entry for entry in before}
    changes: list[str] = []
    for ident, kind, name, value in now:
        earlier = old.get(ident)
        if earlier is None or earlier[1] != kind:
            continue
        if (earlier[2], earlier[3]) != (name, value):
            changes.append(f"{kind} (id {ident}) {_text(earlier[2], earlier[3])} -> {_text(name, value)}")
    if {(e[0], e[1]) for e in now} != {(e[0], e[1]) for e in before}:
        # Controls came or went (a dialog, another view): the list below shows them.
        changes.append("the window's controls changed")
    if not changes:
        return "Your last action changed the window."
    more = f" and {len(changes) - SHOWN_CHANGES} more" if len(changes) > SHOWN_CHANGES else ""
    return "After your last action: " + "; ".join(changes[:SHOWN_CHANGES]) + more + "."
