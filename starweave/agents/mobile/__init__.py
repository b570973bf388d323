"""The MobileAgent: an Android phone over adb, through the MobileDataCollector and MobileExecutor
MCP tools (spec C §4.4, §11.4, §13.9)."""

from starweave.agents.mobile.agent import MobileAgent
from starweave.agents.mobile.local import MobileProcessorContext
from starweave.agents.mobile.processor import MobileAgentProcessor
from starweave.agents.mobile.response import MobileAgentResponse, MobileAgentStatus, response_json_schema
from starweave.agents.mobile.states import (
    ConfirmMobileAgentState,
    ContinueMobileAgentState,
    FailMobileAgentState,
    FinishMobileAgentState,
    MobileAgentStateManager,
    NoneMobileAgentState,
)

__all__ = [
    "ConfirmMobileAgentState",
    "ContinueMobileAgentState",
    "FailMobileAgentState",
    "FinishMobileAgentState",
    "MobileAgent",
    "MobileAgentProcessor",
    "MobileAgentResponse",
    "MobileAgentStateManager",
    "MobileAgentStatus",
    "MobileProcessorContext",
    "NoneMobileAgentState",
    "response_json_schema",
]
