"""ConstellationProcessorContext: every value a ConstellationAgent step's strategies provide, typed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agent import LOGGED, BasicProcessorContext
from starweave.commands import Result
from starweave.galaxy.agent.response import ActionCommandInfo, ConstellationAgentResponse


@dataclass
class ConstellationProcessorContext(BasicProcessorContext):
    """The local context of one ConstellationAgent step (spec E §6.3)."""

    agent_type: str = field(default="ConstellationAgent", metadata=LOGGED)
    agent_name: str = field(default="", metadata=LOGGED)
    weaving_mode: str = field(default="CREATION", metadata=LOGGED)
    device_info: list[dict[str, Any]] = field(default_factory=list, metadata=LOGGED)
    constellation_before: Any = field(default=None, metadata=LOGGED)
    constellation_after: Any = field(default=None, metadata=LOGGED)
    status: str = field(default="", metadata=LOGGED)
    llm_cost: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # LLM_INTERACTION: the answer (None until it is given) and what the plan check warned about.
    parsed_response: ConstellationAgentResponse | None = None
    thought: str | None = None
    plan_warnings: list[str] = field(default_factory=list)
    # ACTION_EXECUTION: the MCP calls, their results, the refused and the repaired edits.
    execution_result: list[Result] = field(default_factory=list)
    action_info: list[ActionCommandInfo] = field(default_factory=list)
    edit_errors: list[str] = field(default_factory=list)
    edit_repairs: list[str] = field(default_factory=list)
