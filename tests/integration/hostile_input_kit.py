"""Helpers for the hostile-input tests (issue 26): a log handler that records tracebacks."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

# uvicorn's loggers do not propagate to the root logger, and uvicorn.Config resets their handlers:
# attach (again) once the server under test has started.
WATCHED = ("", "uvicorn", "uvicorn.error", "uvicorn.asgi")


class Tracebacks(logging.Handler):
    """Records every log record that carries an exception (a traceback in a server's log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.seen.append(f"{record.name}: {record.getMessage()}: {record.exc_info[1]!r}")

    def attach(self) -> None:
        """Watch the root logger and uvicorn's (call after the server has started)."""
        for name in WATCHED:
            logging.getLogger(name).addHandler(self)

    def detach(self) -> None:
        for name in WATCHED:
            logging.getLogger(name).removeHandler(self)


@pytest.fixture
def tracebacks() -> Iterator[Tracebacks]:
    """A :class:`Tracebacks` watching the root logger; call ``attach()`` again after a start."""
    handler = Tracebacks()
    handler.attach()
    yield handler
    handler.detach()
