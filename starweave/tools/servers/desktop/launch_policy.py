"""What ``launch_application`` may start, under the session's ``SHELL`` settings.

``launch_application`` runs a program without the shell server's argv policy or sandbox, so it must
not become a way around them:

* ``readonly`` mode refuses every launch (a started application can write anywhere);
* ``workspace`` mode (the default) refuses command-line programs the shell policy has its own verdict
  on (``rm``, ``bash``, ``python3``, ``sudo``, ...: they belong to the shell tools, which check them),
  and terminal emulators told to run a command (``xterm -e ...``); GUI applications start, after the
  user confirms (``launch_application`` is a sensitive action);
* ``unrestricted`` mode allows everything, as it does for the shell.
"""

from __future__ import annotations

import os
import shlex

from starweave.config.models import ShellConfig
from starweave.tools.servers.shell.catalog import catalogued

TERMINALS = frozenset(
    {
        "xterm", "uxterm", "x-terminal-emulator", "gnome-terminal", "gnome-terminal.real", "konsole",
        "xfce4-terminal", "lxterminal", "mate-terminal", "terminator", "tilix", "kitty", "alacritty", "urxvt",
        "rxvt", "st", "foot", "wezterm", "qterminal", "sakura",
    }
)  # fmt: skip
# How terminal emulators are told to run a command instead of an interactive shell.
TERMINAL_COMMAND_OPTIONS = ("-e", "-x", "--command", "--execute", "--exec", "--", "-c", "--hold")


def launch_refusal(command: str, shell: ShellConfig | None) -> str | None:
    """Why ``command`` may not be launched under ``shell``, or None when it may.

    The command is split like a shell would (no shell runs it); an unparsable command is refused.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return f"cannot parse the command ({exc})"
    if not argv:
        return "the command is empty"
    if shell is None or shell.mode == "unrestricted":
        return None
    if shell.mode == "readonly":
        return "SHELL.MODE is readonly: no application may be launched (it could write files)"
    name = os.path.basename(argv[0])
    if catalogued(name):
        return (
            f"{name} is a command-line program; run it with the shell tools (run_shell), which check it "
            "against the shell policy. launch_application starts GUI applications"
        )
    if name in TERMINALS and any(arg.split("=", 1)[0] in TERMINAL_COMMAND_OPTIONS for arg in argv[1:]):
        return (
            f"{name} was told to run a command; run commands with the shell tools (run_shell), "
            "or launch the terminal without one"
        )
    return None
