"""COM initialisation for the one thread that makes all UI Automation calls.

Every thread that calls UI Automation must initialise COM first. ``uiautomation`` offers
``UIAutomationInitializerInThread`` (a context manager) for that; the backend enters it once, on its
worker thread, before that thread's first UIA call, and leaves it there when the backend closes.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from starweave.errors import DesktopError


class ComApartment:
    """Holds ``uiautomation``'s per-thread COM initialiser for the backend's worker thread.

    A module without ``UIAutomationInitializerInThread`` (an old ``uiautomation``) needs nothing here.
    """

    def __init__(self, auto: Any, errors: tuple[type[BaseException], ...]) -> None:
        self._factory = getattr(auto, "UIAutomationInitializerInThread", None)
        self._errors = errors
        self._scope: contextlib.ExitStack | None = None
        self.thread_id: int | None = None

    @property
    def active(self) -> bool:
        """True while COM is initialised on the worker thread."""
        return self._scope is not None

    def ensure(self) -> None:
        """Initialise COM on the calling thread unless done already (cheap after the first call)."""
        if self._factory is None:
            return
        if self._scope is not None:
            if self.thread_id != threading.get_ident():
                raise DesktopError(
                    "UI Automation was called from a thread other than the backend's worker thread; "
                    "run every UIA call through the backend."
                )
            return
        scope = contextlib.ExitStack()
        try:
            scope.enter_context(self._factory())
        except self._errors as exc:
            raise DesktopError(
                f"Failed to initialise COM for UI Automation on the worker thread: {exc}. "
                "Check that the uiautomation and pywin32 packages work in this Python."
            ) from exc
        self._scope, self.thread_id = scope, threading.get_ident()

    def release(self) -> None:
        """Leave the COM initialiser (on the thread that entered it); a no-op when not entered."""
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.close()
