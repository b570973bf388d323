"""The MobileAgent's CONFIRM rule: an action that sends, deletes, pays, installs or grants asks the
user first (``--yes`` approves; with nobody to ask, the answer is no; see
:func:`starweave.agents.app.safety.ask_confirmation`).

The rules are the mobile servers' own (:func:`~starweave.tools.servers.mobile.risk.assess`: what
a tap, click, swipe, ENTER or app launch touches); the agent adds one: typing into a field whose
name says pay, send... ("Amount to pay"). What is typed never asks by itself: a note "buy milk"
is reversible text; the Send button or the ENTER that sends it is gated instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from starweave.agents.app.controls import Control
from starweave.tools.servers.mobile.risk import Risk, assess, rect_of
from starweave.tools.servers.mobile.uitree import danger_word


def control_dicts(controls: Iterable[Control]) -> list[dict[str, Any]]:
    """The controls as the collector listed them (``dangerous`` and the other extra keys kept)."""
    return [{**c.extra, **c.to_dict()} for c in controls]


def mobile_risk(function: str, arguments: dict[str, Any], controls: Iterable[Control] = ()) -> Risk | None:
    """Why ``function(arguments)`` on the screen of ``controls`` needs the user's approval, and the
    control it is about; None when it may run."""
    listed = control_dicts(controls)
    risk = assess(function, arguments, listed)
    if risk or function != "type_text":
        return risk
    field = next((c for c in listed if c["id"] == str(arguments.get("control_id") or "")), {})
    name = str(field.get("name") or "")
    word = danger_word(name)
    return Risk(f'the field "{name}" says {word}, which cannot always be undone', field) if word else None


def mobile_sensitive_reason(
    function: str, arguments: dict[str, Any], controls: Iterable[Control] = ()
) -> str | None:
    """Why ``function(arguments)`` needs the user's approval, or None (see :func:`mobile_risk`)."""
    risk = mobile_risk(function, arguments, controls)
    return risk.reason if risk else None


def target_moved(function: str, arguments: dict[str, Any], target: dict[str, Any], now: list[Control]) -> str:
    """Why a held action no longer aims at ``target`` on the re-read screen ``now`` ("" when it
    still does): a control action's id must name a control of the same name and rect; a tap's or
    swipe's target must still be listed at the same place."""
    listed = control_dicts(now)
    same = [c for c in listed if c.get("name") == target.get("name") and rect_of(c) == rect_of(target)]
    where = f"'{target.get('name')}' at {target.get('rect')}"
    if function in ("click_control", "type_text"):
        ident = str(arguments.get("control_id") or "")
        if not any(c["id"] == ident for c in same):
            return f"control {ident} is no longer {where}"
        return ""
    # The target held the tap point (or lay on the swipe's path) when it was judged: the same
    # label at the same rect still does.
    return "" if same else f"{where} is no longer on the screen"
