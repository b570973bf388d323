"""The MobileAgent's CONFIRM rule: an action that sends, deletes, pays, installs or uninstalls asks
the user first (``--yes`` approves; with nobody to ask, the answer is no; see
:func:`starweave.agents.app.safety.ask_confirmation`).

What is read is what the action acts on: the name of the control it taps or types into, the text it
types, and the app it launches. Coordinates (``tap``, ``swipe``) name nothing, so they are not read.
"""

from __future__ import annotations

import re
from typing import Any

_SENSITIVE = re.compile(r"\b(send|delete|remove|pay|payment|buy|purchase|install|uninstall)\b", re.IGNORECASE)


def mobile_sensitive_reason(function: str, arguments: dict[str, Any], control_name: str = "") -> str | None:
    """Why ``function(arguments)`` (on the control named ``control_name``) needs the user's approval,
    or None."""
    texts = [
        ("the control", control_name or str(arguments.get("control_name") or "")),
        ("the typed text", str(arguments.get("text") or "") if function == "type_text" else ""),
        ("the app", str(arguments.get("package_name") or "") if function == "launch_app" else ""),
    ]
    for what, text in texts:
        match = _SENSITIVE.search(text)
        if match:
            word = match.group(0).lower()
            return f'{what} "{text}" says {word}, which cannot always be undone'
    return None
