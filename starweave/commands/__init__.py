"""The command layer: Command, Result, ResultStatus and the dispatchers that carry them."""

from starweave.commands.models import Command, Result, ResultStatus

__all__ = ["Command", "Result", "ResultStatus"]
