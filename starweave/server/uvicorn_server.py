"""uvicorn's server with the project's signal rules (starweave.interrupts)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Generator

import uvicorn

from starweave.interrupts import stop_signals


class Server(uvicorn.Server):
    """uvicorn, minding inherited ignored signals and handing each caught signal on once.

    uvicorn installs its handlers even over an inherited SIG_IGN, and re-raises every signal it
    caught when it stops: a second Ctrl+C reached the caller as a stray KeyboardInterrupt.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """Handle the stop signals not ignored while serving; then pass each caught one on once."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = stop_signals()
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)
        caught = list(dict.fromkeys(self._captured_signals))
        self._captured_signals.clear()
        for number in caught:
            # The caller's own handler (asyncio's Ctrl+C, a default SIGTERM) decides what it means.
            signal.raise_signal(number)
