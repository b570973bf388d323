"""Command, Result and ResultStatus: what strategies send to a device and what comes back.

These are the reference's ``aip.messages`` models, field for field, so they travel unchanged in
AIP COMMAND / COMMAND_RESULTS messages. They live at the bottom of the AIP package, importing
nothing of Starweave, so the wire layer (``aip``) and the command layer (``starweave.commands``,
which re-exports them) share one definition without importing each other.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class ResultStatus(StrEnum):
    """Outcome of one command."""

    SUCCESS = "success"
    FAILURE = "failure"
    SKIPPED = "skipped"
    NONE = "none"


class Command(BaseModel):
    """One tool call for the device: ``tool_type`` is ``action`` or ``data_collection``."""

    model_config = ConfigDict(extra="ignore")

    tool_name: str
    parameters: dict[str, Any] | None = None
    tool_type: Literal["data_collection", "action"]
    call_id: str | None = None


class Result(BaseModel):
    """The outcome of one Command, matched to it by ``call_id``."""

    model_config = ConfigDict(extra="ignore")

    status: ResultStatus
    error: str | None = None
    result: Any = None
    namespace: str | None = None
    call_id: str | None = None

    @property
    def ok(self) -> bool:
        """True when the command succeeded."""
        return self.status == ResultStatus.SUCCESS
