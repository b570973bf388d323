"""Ctrl+C and SIGTERM, one set of rules for every command and server.

* A signal the process inherited as ignored (``nohup``, a background job started with SIGINT
  ignored) stays ignored: no handler of ours makes the process stop on it.
* The first Ctrl+C stops gracefully (result files written, exit 130); a second one while shutting
  down ends the process at once, still with exit code 130, never killed by the signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from types import FrameType

INTERRUPTED_EXIT = 130
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_signals() -> tuple[signal.Signals, ...]:
    """The stop signals this process may handle: those not inherited (or set) as ignored."""
    return tuple(sig for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN)


def _exit_now(_signum: int, _frame: FrameType | None) -> None:
    # Already shutting down: the user insists. Flushed, then gone without more cleanup.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(INTERRUPTED_EXIT)


def shutting_down() -> None:
    """Called once the first Ctrl+C is being handled: a further one exits with 130 at once."""
    if threading.current_thread() is threading.main_thread() and signal.SIGINT in stop_signals():
        signal.signal(signal.SIGINT, _exit_now)


def exit_interrupted(code: int) -> None:
    """``sys.exit(code)``; after a Ctrl+C (code 130), further ones are ignored from here on.

    Python resets its own signal handlers to the default at interpreter shutdown, so a Ctrl+C then
    would kill the process by the signal; an ignored SIGINT stays ignored through the shutdown.
    """
    main = threading.current_thread() is threading.main_thread()
    if code == INTERRUPTED_EXIT and main and signal.SIGINT in stop_signals():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)
