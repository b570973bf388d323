"""The CONFIRM safeguard: which GUI actions need the user's approval before they run.

An action is sensitive when it closes or deletes something, sends or pays, or runs a shell
command; the model can also ask for approval itself by answering status CONFIRM. The user is asked
through an injectable async callback; with nobody to ask, the answer is no.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from starweave.tools.desktop.keys import KeyDown, KeyPress, KeyUp, parse_keys
from starweave.tools.servers.desktop.launch_policy import TERMINALS

#: ``await confirmer(action_text, reason) -> bool``.
Confirmer = Callable[[str, str], Awaitable[bool]]

SENSITIVE_FUNCTIONS = {
    "close_application": "it closes an application",
    "close_application_window": "it closes an application window",
    "close_window": "it closes a window",
    "run_shell": "it runs a shell command",
    "execute_command": "it runs a shell command",
    "launch_application": "it starts a program",
}
TYPING_FUNCTIONS = frozenset({"keyboard_input", "set_edit_text"})
_SENSITIVE_WORDS = re.compile(
    r"\b(delete|remove|send|submit|pay|purchase|buy|close|quit|exit|uninstall|format|erase|discard|"
    r"don'?t save|shut ?down|restart|reboot|log ?out|sign ?out|overwrite|empty trash)\b",
    re.IGNORECASE,
)
# Chords that close a window or quit an application, as (modifier, key) after parsing the keys, so
# every spelling the key parser accepts ("%{F4}", "{VK_MENU}{F4}", "{CTRL}q", "^(q)", ...) counts.
_SENSITIVE_CHORDS = {("alt", "f4"), ("ctrl", "q"), ("ctrl", "w")}


def closing_chord(keys: str) -> bool:
    """True when ``keys`` (pywinauto syntax) presses Alt+F4, Ctrl+Q or Ctrl+W."""
    try:
        operations = parse_keys(keys)
    except ValueError:
        return False  # not valid keys: the tool refuses them anyway
    held: set[str] = set()
    for op in operations:
        if isinstance(op, KeyDown):
            held.add(op.key)
        elif isinstance(op, KeyUp):
            held.discard(op.key)
        else:
            pressed = [op.key.lower()] if isinstance(op, KeyPress) else list(op.text.lower())
            modifiers = held | set(op.modifiers if isinstance(op, KeyPress) else ())
            if any((mod, key) in _SENSITIVE_CHORDS for mod in modifiers for key in pressed):
                return True
    return False


def sensitive_reason(
    function: str, arguments: dict[str, Any], control_name: str = "", application: str = ""
) -> str | None:
    """Why ``function(arguments)`` on a control named ``control_name`` in ``application`` (its process
    name) needs approval, or None."""
    if function in SENSITIVE_FUNCTIONS:
        return SENSITIVE_FUNCTIONS[function]
    if function in TYPING_FUNCTIONS and os.path.basename(application) in TERMINALS:
        return f"it types into a terminal ({application}), where text runs as shell commands unchecked"
    if function == "keyboard_input":
        keys = str(arguments.get("keys", ""))
        if closing_chord(keys):
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
