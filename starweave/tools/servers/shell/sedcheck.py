"""Walk a sed script the way GNU sed parses it, far enough to find the commands that reach outside
the text stream: ``e`` (run a command), ``w``/``W`` (write a file), ``r``/``R`` (read a file), and
the ``e`` and ``w`` flags of ``s``. sed also runs with ``--sandbox``, which makes sed itself reject
them; this walk gives the model a clear reason first."""

from __future__ import annotations

import re

from starweave.tools.servers.shell.rulebook import refuse

ADDRESS = re.compile(r"[0-9$]+(~[0-9]+)?|[+~][0-9]+")
FLAGS = re.compile(r"[0-9gpiImMe]*")
LABEL = re.compile(r"[^;\n}]*")
EXIT_CODE = re.compile(r"[ \t]*[0-9]*")
WRITE_REFUSED = "sed: the w command writes files; print to stdout and use a shell redirection (> file)"


def _sed_delimited(script: str, i: int, delim: str) -> int:
    """Index just past the next unescaped ``delim`` from ``i``."""
    while i < len(script):
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delim:
            return i + 1
        i += 1
    refuse("sed: unterminated s or y command")


def _sed_address(script: str, i: int) -> int:
    for _ in range(2):
        while i < len(script) and script[i] in " \t":
            i += 1
        if i < len(script) and script[i] == "/":
            i = _sed_delimited(script, i + 1, "/")
            while i < len(script) and script[i] in "IM":
                i += 1
        elif i < len(script) and script[i] == "\\" and i + 1 < len(script):
            i = _sed_delimited(script, i + 2, script[i + 1])
        else:
            m = ADDRESS.match(script, i)
            if m:
                i = m.end()
        if i < len(script) and script[i] == ",":
            i += 1
            continue
        break
    while i < len(script) and script[i] in " \t!":
        i += 1
    return i


def _rest_of_line(script: str, i: int) -> tuple[str, int]:
    end = script.find("\n", i)
    end = len(script) if end < 0 else end
    return script[i:end].strip(), end


def check_sed_script(script: str) -> None:
    """Walk a sed script: refuse ``e`` (and the ``e`` flag of ``s``), ``w``/``W`` and ``r``/``R``
    (and the ``w`` flag of ``s``), and commands the walker does not know."""
    i = 0
    while i < len(script):
        if script[i] in " \t\n;{}":
            i += 1
            continue
        if script[i] == "#":
            i = _rest_of_line(script, i)[1]
            continue
        i = _sed_address(script, i)
        if i >= len(script):
            break
        cmd = script[i]
        i += 1
        if cmd == "e":
            refuse("sed: the e command executes its argument as a shell command")
        if cmd in "sy":
            if i >= len(script) or script[i] in "\n\\":
                refuse(f"sed: the {cmd} command needs a delimiter")
            delim = script[i]
            i = _sed_delimited(script, i + 1, delim)
            i = _sed_delimited(script, i, delim)
            m = FLAGS.match(script, i)
            flags = m.group() if m else ""
            i += len(flags)
            if "e" in flags:
                refuse("sed: the e flag of s executes the pattern space as a shell command")
            if i < len(script) and script[i] in "wW":
                refuse(WRITE_REFUSED)
        elif cmd in "wW":
            refuse(WRITE_REFUSED)
        elif cmd in "rR":
            refuse("sed: the r and R commands read other files; give the files to sed (or cat) instead")
        elif cmd in "aic":
            i = _rest_of_line(script, i)[1]
        elif cmd in "btT:":
            m = LABEL.match(script, i)
            i = m.end() if m else i
        elif cmd in "qQlL":
            m = EXIT_CODE.match(script, i)
            i = m.end() if m else i
        elif cmd not in "pdDnNgGhHxzF=P":
            refuse(f"sed: the command {cmd!r} is not understood by the policy; keep sed scripts simple")
