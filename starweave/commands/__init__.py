"""The command layer: Command, Result, ResultStatus and the dispatchers that carry them."""

from starweave.commands.dispatcher import BasicCommandDispatcher
from starweave.commands.local import LocalCommandDispatcher
from starweave.commands.models import Command, Result, ResultStatus

__all__ = [
    "BasicCommandDispatcher",
    "Command",
    "LocalCommandDispatcher",
    "Result",
    "ResultStatus",
]
