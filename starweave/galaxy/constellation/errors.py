"""Errors of the task-constellation model.

They subclass :class:`ValueError` as well so that code written against the reference (which raised
plain ``ValueError``) keeps working.
"""

from __future__ import annotations

from starweave.errors import StarweaveError


class ConstellationError(StarweaveError, ValueError):
    """A constellation, task or dependency operation was refused."""


class TaskNotFoundError(ConstellationError):
    """A task id does not exist in the constellation."""


class DependencyNotFoundError(ConstellationError):
    """A dependency (line) id does not exist in the constellation."""


class DuplicateIdError(ConstellationError):
    """A task or line id is already used."""


class CycleError(ConstellationError):
    """Invariant I2: the edit would make the graph cyclic."""


class ModificationError(ConstellationError):
    """Invariant I3 (or I1): the task or dependency is no longer modifiable."""


class InvalidTransitionError(ConstellationError):
    """A task status transition is not allowed from the current status."""


class UnsatisfiableDependencyError(ConstellationError):
    """A new dependency could never be satisfied (its source already ended the wrong way)."""
