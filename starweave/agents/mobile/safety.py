"""The MobileAgent's CONFIRM rule: an action that sends, deletes, pays, installs or uninstalls asks
the user first (``--yes`` approves; with nobody to ask, the answer is no; see
:func:`starweave.agents.app.safety.ask_confirmation`).

The danger words and the rule for taps and clicks are the mobile servers' own
(:func:`~starweave.tools.servers.mobile.uitree.action_risk`: a click on, or a tap inside, a control
labelled with one); the agent adds what it types and where: the typed text, the control typed into,
and the app it launches.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from starweave.agents.app.controls import Control
from starweave.tools.servers.mobile.uitree import action_risk, danger_word


def mobile_sensitive_reason(
    function: str, arguments: dict[str, Any], controls: Iterable[Control] = ()
) -> str | None:
    """Why ``function(arguments)`` on the screen of ``controls`` needs the user's approval, or None."""
    listed = [c.to_dict() for c in controls]
    reason = action_risk(function, arguments, listed)
    if reason:
        return reason
    by_id = {c["id"]: c for c in listed}
    texts: list[tuple[str, str]] = []
    if function == "type_text":
        control = by_id.get(str(arguments.get("control_id") or ""), {})
        texts += [
            ("the typed text", str(arguments.get("text") or "")),
            ("the field", str(control.get("name") or "")),
        ]
    if function == "launch_app":
        texts.append(("the app", str(arguments.get("package_name") or "")))
    for what, text in texts:
        word = danger_word(text)
        if word:
            return f'{what} "{text}" says {word}, which cannot always be undone'
    return None
