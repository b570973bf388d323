"""One dispatch table per receiving side: AIP message type → handler.

The agent server (``server.ws_handler``), the device client (``client.connection``) and the
constellation endpoint (``aip.endpoints``) each route what they receive through one table instead
of an if/elif chain, so adding a message type means adding it to ``messages.py`` and one entry to
the table of the side that handles it. :meth:`DispatchTable.missing` lets a test pin that every
type a side can receive has a handler.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Generic, TypeVar

__all__ = ["DispatchTable"]

K = TypeVar("K", bound=StrEnum)
H = TypeVar("H")


class DispatchTable(Generic[K, H]):
    """An immutable map from message type to handler; the handlers' signature is the side's own."""

    def __init__(self, handlers: Mapping[K, H]) -> None:
        self._handlers: dict[K, H] = dict(handlers)

    def handler_for(self, message_type: K) -> H | None:
        """The handler of ``message_type``; None when this side does not handle it."""
        return self._handlers.get(message_type)

    def handled(self) -> frozenset[K]:
        """The message types this table routes."""
        return frozenset(self._handlers)

    def missing(self, message_types: Iterable[K]) -> list[K]:
        """The types among ``message_types`` that have no handler (in the given order)."""
        return [kind for kind in message_types if kind not in self._handlers]
