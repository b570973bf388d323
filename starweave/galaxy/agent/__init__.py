"""The ConstellationAgent: creation and editing of TaskConstellations (spec B §5, E §6–§7)."""

from starweave.galaxy.agent.agent import ConstellationAgent
from starweave.galaxy.agent.processor import ConstellationAgentProcessor, ConstellationProcessorContext
from starweave.galaxy.agent.prompter import (
    ConstellationPrompter,
    ConstellationPrompterFactory,
    format_device_info,
)
from starweave.galaxy.agent.response import (
    ActionCommandInfo,
    ConstellationAgentResponse,
    ConstellationAgentStatus,
    WeavingMode,
    creation_json_schema,
    editing_json_schema,
    normalise_status,
)
from starweave.galaxy.agent.states import (
    ConstellationAgentStateManager,
    ContinueConstellationAgentState,
    FailConstellationAgentState,
    FinishConstellationAgentState,
    StartConstellationAgentState,
)
from starweave.galaxy.agent.strategies import ConstellationStrategyFactory

__all__ = [
    "ActionCommandInfo",
    "ConstellationAgent",
    "ConstellationAgentProcessor",
    "ConstellationAgentResponse",
    "ConstellationAgentStateManager",
    "ConstellationAgentStatus",
    "ConstellationProcessorContext",
    "ConstellationPrompter",
    "ConstellationPrompterFactory",
    "ConstellationStrategyFactory",
    "ContinueConstellationAgentState",
    "FailConstellationAgentState",
    "FinishConstellationAgentState",
    "StartConstellationAgentState",
    "WeavingMode",
    "creation_json_schema",
    "editing_json_schema",
    "format_device_info",
    "normalise_status",
]
