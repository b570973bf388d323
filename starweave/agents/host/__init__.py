"""The HostAgent: picks an application window (or a third-party agent) per subtask and hands over."""

from starweave.agents.host.agent import HostAgent
from starweave.agents.host.local import HostProcessorContext
from starweave.agents.host.processor import HostAgentProcessor
from starweave.agents.host.response import HostAgentResponse, HostAgentStatus, response_json_schema
from starweave.agents.host.states import HostAgentStateManager
from starweave.agents.host.targets import TargetInfo, TargetKind, TargetRegistry

__all__ = [
    "HostAgent",
    "HostAgentProcessor",
    "HostAgentResponse",
    "HostAgentStateManager",
    "HostAgentStatus",
    "HostProcessorContext",
    "TargetInfo",
    "TargetKind",
    "TargetRegistry",
    "response_json_schema",
]
