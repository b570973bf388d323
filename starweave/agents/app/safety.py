"""The CONFIRM safeguard: which GUI actions need the user's approval before they run.

An action is sensitive when it closes or deletes something, sends or pays, or runs a shell
command; the model can also ask for approval itself by answering status CONFIRM. The user is asked
through an injectable async callback; with nobody to ask, the answer is no.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

#: ``await confirmer(action_text, reason) -> bool``.
Confirmer = Callable[[str, str], Awaitable[bool]]

SENSITIVE_FUNCTIONS = {
    "close_application": "it closes an application",
    "close_application_window": "it closes an application window",
    "close_window": "it closes a window",
    "run_shell": "it runs a shell command",
    "execute_command": "it runs a shell command",
}
_SENSITIVE_WORDS = re.compile(
    r"\b(delete|remove|send|submit|pay|purchase|buy|close|quit|exit|uninstall|format|erase|discard|"
    r"don'?t save|shut ?down|restart|reboot|log ?out|sign ?out|overwrite|empty trash)\b",
    re.IGNORECASE,
)
# Alt+F4 closes the window, Ctrl+Q quits most applications.
_SENSITIVE_KEYS = ("%{F4}", "%{f4}", "^q", "^Q")


def sensitive_reason(function: str, arguments: dict[str, Any], control_name: str = "") -> str | None:
    """Why ``function(arguments)`` on a control named ``control_name`` needs approval, or None."""
    if function in SENSITIVE_FUNCTIONS:
        return SENSITIVE_FUNCTIONS[function]
    if function == "keyboard_input":
        keys = str(arguments.get("keys", ""))
        if any(k in keys for k in _SENSITIVE_KEYS):
            return f"the keys {keys!r} close or quit the application"
    if function in ("click_input", "click_on_coordinates", "keyboard_input"):
        name = control_name or str(arguments.get("name", ""))
        match = _SENSITIVE_WORDS.search(name)
        if match:
            return f'it activates "{name}" ({match.group(0).lower()} cannot always be undone)'
    return None


async def ask_confirmation(
    confirmer: Confirmer | None, auto_approve: bool, safe_guard: bool, action_text: str, reason: str
) -> bool:
    """Ask whether a sensitive action may run: approved with ``auto_approve`` or the safeguard off."""
    if auto_approve or not safe_guard:
        return True
    if confirmer is None:
        return False
    return await confirmer(action_text, reason)
