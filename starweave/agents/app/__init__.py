"""The AppAgent: operates one application window (controls as text, GUI and API tools) for the HostAgent."""

from starweave.agents.app.agent import AppAgent
from starweave.agents.app.local import AppProcessorContext
from starweave.agents.app.processor import AppAgentProcessor
from starweave.agents.app.response import AppAction, AppAgentResponse, AppAgentStatus, response_json_schema
from starweave.agents.app.states import AppAgentStateManager

__all__ = [
    "AppAction",
    "AppAgent",
    "AppAgentProcessor",
    "AppAgentResponse",
    "AppAgentStateManager",
    "AppAgentStatus",
    "AppProcessorContext",
    "response_json_schema",
]
