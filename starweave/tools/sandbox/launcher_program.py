"""The program the launcher runs: its source files joined, compiled once per process.

The launcher runs as ``python -I -S -c PROGRAM`` so that nothing on disk can change it after
Starweave started: PROGRAM is the compiled code of LAUNCHER_FILES (marshalled, in hex) when the
launcher's interpreter is Starweave's own, else their source. The supervisor's answers to metadata
calls (``launcher_notify``, for Landlock as a normal user only) travel in the spec of the commands
that need them, so that every other command loads less.
"""

from __future__ import annotations

import marshal
import os
import sys
from functools import cache
from pathlib import Path

MAX_ARG_CHARS = 128 * 1024 - 1  # the kernel's limit for one argument of execve (MAX_ARG_STRLEN)
LAUNCHER_FILES = ("launcher_confine.py", "launcher.py")
NOTIFY_FILE = "launcher_notify.py"


def _own_python(python: str) -> bool:
    return python == os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


@cache
def launcher_source() -> str:
    """The launcher's program: the LAUNCHER_FILES joined (each skips its imports of the ones before
    when it runs as ``__main__``), read once: later changes on disk have no effect."""
    first, *rest = (Path(__file__).with_name(n).read_text("utf-8") for n in LAUNCHER_FILES)
    future = "from __future__ import annotations\n"
    return "\n".join([first, *(text.replace(future, "", 1) for text in rest)])


@cache
def launcher_code(python: str) -> str:
    """The ``-c`` program that runs the launcher in ``python``: its compiled code (docstrings left out)
    when that is this interpreter and the code fits in one argument (saves compiling it for every
    command), else its source."""
    if not _own_python(python):
        return launcher_source()
    code = compile(launcher_source(), "starweave-launcher", "exec", optimize=2)
    program = f"import marshal;exec(marshal.loads(bytes.fromhex({marshal.dumps(code).hex()!r})))"
    return program if len(program) < MAX_ARG_CHARS else launcher_source()


@cache
def notify_program(python: str) -> tuple[str, str]:
    """``launcher_notify`` for the spec, as ``("code", hex of its marshalled code)`` for this
    interpreter or ``("source", text)`` for another; the launcher runs it in its own namespace."""
    text = Path(__file__).with_name(NOTIFY_FILE).read_text("utf-8")
    if not _own_python(python):
        return "source", text
    return "code", marshal.dumps(compile(text, "starweave-notify", "exec", optimize=2)).hex()
