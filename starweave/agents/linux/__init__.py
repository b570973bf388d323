"""The LinuxAgent: a single-tier device agent that works through shell and file tools."""

from starweave.agents.linux.agent import LinuxAgent
from starweave.agents.linux.local import LinuxProcessorContext
from starweave.agents.linux.processor import LinuxAgentProcessor
from starweave.agents.linux.response import LinuxAgentResponse, LinuxAgentStatus, response_json_schema
from starweave.agents.linux.states import (
    ContinueLinuxAgentState,
    FailLinuxAgentState,
    FinishLinuxAgentState,
    LinuxAgentStateManager,
    NoneLinuxAgentState,
)

__all__ = [
    "ContinueLinuxAgentState",
    "FailLinuxAgentState",
    "FinishLinuxAgentState",
    "LinuxAgent",
    "LinuxAgentProcessor",
    "LinuxAgentResponse",
    "LinuxAgentStateManager",
    "LinuxAgentStatus",
    "LinuxProcessorContext",
    "NoneLinuxAgentState",
    "response_json_schema",
]
