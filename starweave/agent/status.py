"""The seven generic agent statuses shared by every device agent."""

from __future__ import annotations

from enum import Enum


class AgentStatus(Enum):
    """Generic status of a device agent; the value is the name, as the LLM writes it."""

    ERROR = "ERROR"
    FINISH = "FINISH"
    CONTINUE = "CONTINUE"
    FAIL = "FAIL"
    PENDING = "PENDING"
    CONFIRM = "CONFIRM"
    SCREENSHOT = "SCREENSHOT"


def status_key(status: str | Enum) -> str:
    """Return the registry key of a status: the enum's value, or the string itself."""
    if isinstance(status, Enum):
        return str(status.value)
    return status
