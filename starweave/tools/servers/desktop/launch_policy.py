"""What ``launch_application`` may start, under the session's ``SHELL`` settings.

``launch_application`` runs a program without the shell server's sandbox, so it must
not become a way around them:

* ``readonly`` mode refuses every launch (a started application can write anywhere);
* ``workspace`` mode (the default) starts only the desktop's GUI applications: on Linux, programs
  named by the ``Exec`` line of a system ``.desktop`` entry that does not run in a terminal
  (``mousepad``, ``gnome-calculator``, ...). Whatever the entry says, it refuses command-line
  command-line programs (shells, interpreters, wrappers such as ``sudo``, and every program of the
  system's folders that no such entry starts: ``rm``, ``bash``, ``python3`` ...),
  judged by the name given and by the file it resolves to (a symlink named ``mousepad`` may be a
  shell), launchers (``systemd-run``, ``gio``, ...), terminal emulators (typing into one runs
  commands), editors with a shell escape, programs inside the workspace, and any argument naming one
  of those. On Windows, where there are no ``.desktop`` entries, the shells, script hosts and
  script files are refused. Every launch also needs the user's confirmation (CONFIRM);
* ``unrestricted`` mode allows everything, as it does for the shell.

A ``UIState`` built without SHELL settings (tests, embedding) applies no policy.
"""

from __future__ import annotations

import configparser
import functools
import os
import shlex
import shutil
import sys
from pathlib import Path

from starweave.config.models import ShellConfig
from starweave.tools.sandbox.launch import CLEAN_PATH
from starweave.tools.servers.shell.danger import INTERPRETER, WRAPPERS

TERMINALS = frozenset(
    {
        "xterm", "uxterm", "lxterm", "koi8rxterm", "x-terminal-emulator", "gnome-terminal", "kgx", "ptyxis",
        "konsole", "xfce4-terminal", "lxterminal", "mate-terminal", "terminator", "tilix", "kitty",
        "alacritty", "urxvt", "urxvtc", "rxvt", "rxvt-unicode", "st", "foot", "footclient", "wezterm",
        "qterminal", "sakura", "guake", "tilda", "terminology", "ghostty", "mlterm", "roxterm",
        "cool-retro-term", "xdg-terminal-exec", "sensible-terminal", "eterm", "aterm", "wt",
    }
)  # fmt: skip
# Programs whose job is to start other programs (or units, or .desktop Exec lines) unchecked, and
# GUI editors with a command escape (``gvim -c '!cmd'``, ``emacs --eval``).
LAUNCHERS = frozenset(
    {
        "systemd-run", "gio", "gtk-launch", "dex", "dbus-send", "dbus-launch", "dbus-run-session", "gdbus",
        "busctl", "xinit", "startx", "exo-open", "kioclient", "kioclient5", "kstart", "kstart5", "xdotool",
        "wine", "flatpak-spawn", "ssh-agent", "sg", "newgrp", "xvfb-run", "bwrap", "firejail", "docker",
        "podman", "uv", "uvx", "run-parts", "unbuffer", "start-stop-daemon", "openvt", "sshpass", "make",
        "gvim", "evim", "gview", "gvimdiff", "emacs", "emacs-gtk", "emacsclient", "xemacs",
    }
)  # fmt: skip
WINDOWS_REFUSED = frozenset(
    {
        "cmd", "powershell", "powershell_ise", "pwsh", "wsl", "bash", "wscript", "cscript", "mshta",
        "rundll32", "regsvr32", "wt", "conhost", "schtasks", "msiexec", "reg", "python", "pythonw", "py",
        "start", "explorer",
    }
)  # fmt: skip
WINDOWS_SCRIPTS = (
    ".bat",
    ".cmd",
    ".ps1",
    ".vbs",
    ".vbe",
    ".js",
    ".jse",
    ".wsf",
    ".wsh",
    ".hta",
    ".msi",
    ".lnk",
)
APPLICATION_DIRS_DEFAULT = "/usr/local/share:/usr/share"


def launch_refusal(command: str, shell: ShellConfig | None, windows: bool | None = None) -> str | None:
    """Why ``command`` may not be launched under ``shell``, or None when it may.

    The command is split the way the platform's backend splits it (no shell runs it); an unparsable
    command is refused. ``windows`` overrides the platform (for tests).
    """
    windows = sys.platform == "win32" if windows is None else windows
    try:
        argv = shlex.split(command, posix=not windows)
    except ValueError as exc:
        return f"cannot parse the command ({exc})"
    if not argv:
        return "the command is empty"
    if shell is None or shell.mode == "unrestricted":
        return None
    if shell.mode == "readonly":
        return "SHELL.MODE is readonly: no application may be launched (it could write files)"
    if windows:
        return _windows_refusal(argv)
    found = shutil.which(argv[0])
    real = os.path.realpath(found) if found else ""
    workspace = os.path.realpath(shell.workspace) if shell.workspace else ""
    if real and workspace and (real == workspace or real.startswith(workspace + os.sep)):
        return (
            f"{argv[0]} is a program inside the workspace; run it with the shell tools (run_shell), "
            "which sandbox it"
        )
    # Both the name given and the file it really is, then every argument that names a program.
    names = [os.path.basename(argv[0]), os.path.basename(real)]
    for name in dict.fromkeys(n for n in names if n):
        refusal = _program_refusal(name)
        if refusal:
            return refusal
    for arg in argv[1:]:
        refusal = _program_refusal(os.path.basename(arg.split("=", 1)[-1]))
        if refusal:
            return f"an argument names a program: {refusal}"
    if not any(n in desktop_applications() for n in names if n):
        return (
            f"{argv[0]} is not a desktop application (no .desktop entry runs it outside a terminal); "
            "launch_application starts the installed GUI applications, the shell tools run the rest"
        )
    return None


def command_line_program(name: str) -> bool:
    """Whether ``name`` runs code or other programs (a shell, an interpreter, a wrapper such as sudo
    or env), or is a program of the system's folders that no desktop entry starts outside a terminal."""
    if INTERPRETER.fullmatch(name) or name in WRAPPERS or name in ("su", "pkexec", "busybox"):
        return True
    return shutil.which(name, path=CLEAN_PATH) is not None and name not in desktop_applications()


def _program_refusal(name: str) -> str | None:
    if name in LAUNCHERS:
        return f"{name} runs other programs or commands unchecked; launch the application itself"
    if name in TERMINALS:
        return (
            f"{name} is a terminal (what is typed into it runs as commands); use the shell tools (run_shell)"
        )
    if command_line_program(name):
        return (
            f"{name} is a command-line program; run it with the shell tools (run_shell), which run it "
            "in the sandbox. launch_application starts GUI applications"
        )
    return None


def _windows_refusal(argv: list[str]) -> str | None:
    for word in argv:
        name = os.path.basename(word.strip('"').replace("\\", "/")).lower()
        if name.endswith(WINDOWS_SCRIPTS):
            return f"{name} is a script; run scripts with the shell tools"
        stem = name.removesuffix(".exe").removesuffix(".com")
        if stem in WINDOWS_REFUSED or stem.startswith("python"):
            return f"{stem} runs commands or scripts; use the shell tools"
    return None


@functools.cache
def desktop_applications() -> frozenset[str]:
    """Program names (and paths) the system's ``.desktop`` entries start outside a terminal."""
    roots = os.environ.get("XDG_DATA_DIRS") or APPLICATION_DIRS_DEFAULT
    programs: set[str] = set()
    for root in roots.split(os.pathsep):
        folder = Path(root) / "applications"
        if not folder.is_dir():
            continue
        for entry in folder.rglob("*.desktop"):
            program = _exec_program(entry)
            if program:
                programs.update({program, os.path.basename(program)})
    return frozenset(programs)


def _exec_program(entry: Path) -> str | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(entry, encoding="utf-8")
        section = parser["Desktop Entry"]
    except (configparser.Error, KeyError, OSError, UnicodeDecodeError):
        return None
    if section.get("Terminal", "false").strip().lower() == "true" or not section.get("Exec"):
        return None
    try:
        words = shlex.split(section["Exec"])
    except ValueError:
        return None
    return words[0] if words else None
