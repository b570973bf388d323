"""Errors specific to the agent server (subclasses of the project's tree)."""

from __future__ import annotations

from starweave.errors import SessionError, StarweaveError


class DuplicateClientError(StarweaveError):
    """A client registered with an id that is already connected."""


class CapacityError(SessionError):
    """The server already runs ``max_sessions`` sessions."""
