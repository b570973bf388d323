"""The command layer: the dispatchers that carry Commands and bring back Results.

``Command``, ``Result`` and ``ResultStatus`` are defined with the AIP wire models
(``starweave.aip.tool_calls``) and named here too, because this is where agent code takes them from:
the command layer sits above the wire layer, never the other way round.
"""

from starweave.aip.tool_calls import Command, Result, ResultStatus
from starweave.commands.dispatcher import BasicCommandDispatcher
from starweave.commands.local import LocalCommandDispatcher

__all__ = [
    "BasicCommandDispatcher",
    "Command",
    "LocalCommandDispatcher",
    "Result",
    "ResultStatus",
]
