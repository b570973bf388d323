"""LinuxProcessorContext: every value a LinuxAgent step's strategies provide, typed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agent import BasicProcessorContext
from starweave.agents.linux.response import LinuxAgentResponse
from starweave.commands import Result


@dataclass
class LinuxProcessorContext(BasicProcessorContext):
    """The local context of one LinuxAgent step (``None``: not provided yet)."""

    parsed_response: LinuxAgentResponse | None = None
    # The answer's parts, as the response log shows them.
    action: dict[str, Any] | None = None
    thought: str | None = None
    observation: str | None = None
    # The action phase: the call's results, its readable form, a note to the model and the answer.
    results: list[Result] = field(default_factory=list)
    call: str | None = None
    note: str | None = None
    result: str | None = None
    # After a call that failed: what the folder the next command starts in holds (orientation).
    surroundings: str | None = None
    # The memory phase: the output shown for the step.
    output: str | None = None
